package views

// APIPage is the readable description of the JSON API, built from the
// same OpenAPI document the API serves at /api/v1/openapi.json.
type APIPage struct {
	Layout      Layout
	Title       string
	Version     string     // the version in every path: "v1"
	Prefix      string     // the paths' common start: "/api/v1"
	Description [][]Inline // paragraphs
	SpecURL     string
	Groups      []APIGroup
}

// Inline is a run of text from the description's Markdown: plain, a code
// span, or a link.
type Inline struct {
	Text string
	Code bool
	URL  string // set for a link
}

// APIGroup is one tag of the description with its operations.
type APIGroup struct {
	ID, Name    string
	Description []Inline
	Ops         []APIOp
}

// APIOp is one operation (method and path).
type APIOp struct {
	ID, Method, Path     string
	Summary, Description []Inline
	Auth                 bool
	Params               []APIField
	Body                 []APIField
	Responses            []APIResponse
	Example              *APIExample
}

// APIExample is a request of an operation and the answer it got.
type APIExample struct {
	Curl, Answer string
}

// APIField is a parameter or a top-level field of a request body.
type APIField struct {
	Name, In, Type string
	Description    []Inline
	Required       bool
}

// APIResponse is one documented answer.
type APIResponse struct {
	Status      string
	Description []Inline
}
