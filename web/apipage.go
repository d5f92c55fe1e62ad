package web

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/views"
	"go.yaml.in/yaml/v3"
)

// apiPageModel is the API page's model, built once from openapi.yaml: the
// readable page and the served description never disagree.
var apiPageModel = sync.OnceValue(func() views.APIPage { return buildAPIPage(openapiYAML) })

// handleAPIPage serves GET /api: the API described for people.
func (s *Server) handleAPIPage(c echo.Context) error {
	p := apiPageModel()
	p.Layout = s.layout("API")
	p.Layout.Description = apiDescription
	return s.renderPage(c, http.StatusOK, views.API(p))
}

type yamlMap = map[string]any

func buildAPIPage(src []byte) views.APIPage {
	var doc yamlMap
	if err := yaml.Unmarshal(src, &doc); err != nil {
		panic(fmt.Sprintf("openapi.yaml: %v", err))
	}
	info, _ := doc["info"].(yamlMap)
	// The version people call is the one in every path, not the
	// document's own revision (info.version).
	p := views.APIPage{Title: str(info["title"]), Version: strings.TrimPrefix(apiPrefix, "/api/"), Prefix: apiPrefix, SpecURL: openAPIPath}
	for _, para := range strings.Split(strings.TrimSpace(str(info["description"])), "\n\n") {
		p.Description = append(p.Description, inlineMarkdown(para))
	}
	examples := apiExampleViews()
	resolve := func(v any) yamlMap {
		m, _ := v.(yamlMap)
		for m != nil && m["$ref"] != nil {
			m = lookupRef(doc, str(m["$ref"]))
		}
		return m
	}
	groups := map[string]*views.APIGroup{}
	tags, _ := doc["tags"].([]any)
	for _, t := range tags {
		tm, _ := t.(yamlMap)
		g := &views.APIGroup{ID: "tag-" + str(tm["name"]), Name: str(tm["name"]), Description: inlineMarkdown(str(tm["description"]))}
		groups[g.Name] = g
	}
	paths, _ := doc["paths"].(yamlMap)
	pathNames := make([]string, 0, len(paths))
	for k := range paths {
		pathNames = append(pathNames, k)
	}
	sort.Strings(pathNames)
	for _, path := range pathNames {
		item, _ := paths[path].(yamlMap)
		shared, _ := item["parameters"].([]any)
		for _, method := range []string{"get", "post", "delete"} {
			o, ok := item[method].(yamlMap)
			if !ok {
				continue
			}
			op := views.APIOp{ID: str(o["operationId"]), Method: strings.ToUpper(method), Path: path,
				Summary: inlineMarkdown(str(o["summary"])), Description: inlineMarkdown(str(o["description"])), Example: examples[str(o["operationId"])]}
			_, op.Auth = o["security"]
			params, _ := o["parameters"].([]any)
			for _, pr := range append(append([]any{}, shared...), params...) {
				pm := resolve(pr)
				f := views.APIField{Name: str(pm["name"]), In: str(pm["in"]), Description: inlineMarkdown(str(pm["description"])), Type: typeText(resolve(pm["schema"]))}
				f.Required, _ = pm["required"].(bool)
				op.Params = append(op.Params, f)
			}
			if rb := resolve(o["requestBody"]); rb != nil {
				content, _ := rb["content"].(yamlMap)
				js, _ := content["application/json"].(yamlMap)
				schema := resolve(js["schema"])
				props, _ := schema["properties"].(yamlMap)
				required, _ := schema["required"].([]any)
				names := make([]string, 0, len(props))
				for n := range props {
					names = append(names, n)
				}
				sort.Slice(names, func(i, j int) bool {
					return fieldOrder(names[i], required) < fieldOrder(names[j], required) || fieldOrder(names[i], required) == fieldOrder(names[j], required) && names[i] < names[j]
				})
				for _, n := range names {
					ps := resolve(props[n])
					f := views.APIField{Name: n, Type: typeText(ps), Description: inlineMarkdown(str(ps["description"]))}
					for _, r := range required {
						f.Required = f.Required || str(r) == n
					}
					op.Body = append(op.Body, f)
				}
			}
			resps, _ := o["responses"].(yamlMap)
			codes := make([]string, 0, len(resps))
			for code := range resps {
				codes = append(codes, code)
			}
			sort.Strings(codes)
			for _, code := range codes {
				r := resolve(resps[code])
				op.Responses = append(op.Responses, views.APIResponse{Status: code, Description: inlineMarkdown(str(r["description"]))})
			}
			tagList, _ := o["tags"].([]any)
			tag := "other"
			if len(tagList) > 0 {
				tag = str(tagList[0])
			}
			g := groups[tag]
			if g == nil {
				g = &views.APIGroup{ID: "tag-" + tag, Name: tag}
				groups[tag] = g
				tags = append(tags, yamlMap{"name": tag})
			}
			g.Ops = append(g.Ops, op)
		}
	}
	for _, t := range tags {
		tm, _ := t.(yamlMap)
		if g := groups[str(tm["name"])]; g != nil && len(g.Ops) > 0 {
			p.Groups = append(p.Groups, *g)
		}
	}
	return p
}

// inlineMarkdown reads the Markdown the description uses inside a
// paragraph, code spans and links, into runs of text; whitespace folds to
// single spaces, and anything else stays as written.
func inlineMarkdown(s string) []views.Inline {
	s = strings.Join(strings.Fields(s), " ")
	var out []views.Inline
	text := func(t string) {
		if t == "" {
			return
		}
		if n := len(out); n > 0 && !out[n-1].Code && out[n-1].URL == "" {
			out[n-1].Text += t
			return
		}
		out = append(out, views.Inline{Text: t})
	}
	for s != "" {
		i := strings.IndexAny(s, "`[")
		if i < 0 {
			text(s)
			break
		}
		text(s[:i])
		s = s[i:]
		if s[0] == '`' {
			if j := strings.IndexByte(s[1:], '`'); j > 0 {
				out = append(out, views.Inline{Text: s[1 : 1+j], Code: true})
				s = s[2+j:]
				continue
			}
		} else if j := strings.Index(s, "]("); j > 1 {
			if k := strings.IndexByte(s[j+2:], ')'); k > 0 && !strings.Contains(s[1:j], "[") {
				out = append(out, views.Inline{Text: s[1:j], URL: s[j+2 : j+2+k]})
				s = s[j+3+k:]
				continue
			}
		}
		text(s[:1]) // a lone backtick or bracket is text
		s = s[1:]
	}
	return out
}

// fieldOrder puts required fields first.
func fieldOrder(name string, required []any) int {
	for _, r := range required {
		if str(r) == name {
			return 0
		}
	}
	return 1
}

func lookupRef(doc yamlMap, ref string) yamlMap {
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(yamlMap)
		cur = m[part]
	}
	m, _ := cur.(yamlMap)
	return m
}

// typeText describes a schema in a few words: "integer 1..1000",
// "string (date-time)", "one of pending, failed, delivered".
func typeText(s yamlMap) string {
	if s == nil {
		return ""
	}
	if e, ok := s["enum"].([]any); ok {
		parts := make([]string, len(e))
		for i, v := range e {
			parts[i] = fmt.Sprint(v)
		}
		return "one of " + strings.Join(parts, ", ")
	}
	var t string
	switch x := s["type"].(type) {
	case string:
		t = x
	case []any:
		parts := make([]string, len(x))
		for i, v := range x {
			parts[i] = fmt.Sprint(v)
		}
		t = strings.Join(parts, " or ")
	default:
		if s["oneOf"] != nil {
			return "one of several shapes"
		}
		if s["const"] != nil {
			return fmt.Sprint(s["const"])
		}
		return "object"
	}
	if f := str(s["format"]); f != "" {
		t += " (" + f + ")"
	}
	lo, hasLo := s["minimum"]
	hi, hasHi := s["maximum"]
	switch {
	case hasLo && hasHi:
		t += fmt.Sprintf(" %v..%v", lo, hi)
	case hasHi:
		t += fmt.Sprintf(" up to %v", hi)
	}
	if d, ok := s["default"]; ok {
		t += fmt.Sprintf(", default %v", d)
	}
	return t
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
