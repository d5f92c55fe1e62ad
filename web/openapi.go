package web

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"
	"go.yaml.in/yaml/v3"
)

// openapiYAML is the OpenAPI 3.1 description of the JSON API, kept true
// by a test that checks real answers of every route against it.
//
//go:embed openapi.yaml
var openapiYAML []byte

// openapiJSON is openapiYAML as JSON, built once.
var openapiJSON = mustYAMLToJSON(openapiYAML)

func mustYAMLToJSON(y []byte) []byte {
	var doc any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		panic(fmt.Sprintf("openapi.yaml: %v", err))
	}
	out, err := json.Marshal(jsonable(doc))
	if err != nil {
		panic(fmt.Sprintf("openapi.yaml: %v", err))
	}
	return out
}

// jsonable turns YAML's decoded values into ones encoding/json takes
// (YAML may decode mappings with non-string keys).
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

// handleOpenAPI serves GET /api/v1/openapi.json.
func (s *Server) handleOpenAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openapiJSON)
}

// Routes lists the method and path of every route, with Echo's
// parameters (":board", "*"), sorted: the route table tests walk.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		out = append(out, r.Method+" "+r.Path)
	}
	sort.Strings(out)
	return out
}

// APIRoutes lists the method and OpenAPI-style path ("{param}") of every
// route the API description must cover: everything under /api/ and the
// operational routes.
func (s *Server) APIRoutes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		if k := kindOf(r.Path); k != kindAPI && k != kindOps && k != kindMetrics {
			continue
		}
		if r.Method == http.MethodHead {
			continue // every GET's twin (routes.go), not described apart
		}
		parts := strings.Split(r.Path, "/")
		for i, p := range parts {
			if strings.HasPrefix(p, ":") {
				parts[i] = "{" + p[1:] + "}"
			}
		}
		out = append(out, r.Method+" "+strings.Join(parts, "/"))
	}
	sort.Strings(out)
	return out
}
