package views

// APIPage is the readable description of the JSON API, built from the
// same OpenAPI document the API serves at /api/v1/openapi.json.
type APIPage struct {
	Layout      Layout
	Title       string
	Version     string
	Description []string // paragraphs
	SpecURL     string
	Groups      []APIGroup
}

// APIGroup is one tag of the description with its operations.
type APIGroup struct {
	ID, Name, Description string
	Ops                   []APIOp
}

// APIOp is one operation (method and path).
type APIOp struct {
	ID, Method, Path, Summary, Description string
	Auth                                   bool
	Params                                 []APIField
	Body                                   []APIField
	Responses                              []APIResponse
}

// APIField is a parameter or a top-level field of a request body.
type APIField struct {
	Name, In, Type, Description string
	Required                    bool
}

// APIResponse is one documented answer.
type APIResponse struct {
	Status, Description string
}
