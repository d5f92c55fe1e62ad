package web

// APIExample is an example of the API page, for the test that replays it.
type APIExample struct{ Op, Method, Path, Body, Answer string }

// APIExamples and APIExampleBoards open the API page's examples to
// web_test.
func APIExamples() []APIExample {
	out := make([]APIExample, len(apiExamples))
	for i, e := range apiExamples {
		out[i] = APIExample(e)
	}
	return out
}

const APIExampleBoards = apiExampleBoards
