package ranking

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Webhook event types (contract section 10).
const (
	EventPeriodFinal   = "period.final"
	EventResultAmended = "result.amended"
	EventMemberRemoved = "member.removed"
)

// WebhookEvents lists every event type a webhook may subscribe to.
var WebhookEvents = []string{EventPeriodFinal, EventResultAmended, EventMemberRemoved}

// Webhook is one configured receiver: deliveries of its events (of its
// boards, or every board when Boards is empty) are POSTed to URL, signed
// with the secret read from the environment variable SecretEnv at start.
type Webhook struct {
	URL       string
	SecretEnv string
	Events    []string
	Boards    []string

	secret []byte
}

// Wants reports whether the webhook takes events of type typ on board.
func (w *Webhook) Wants(typ, board string) bool {
	return slices.Contains(w.Events, typ) && (len(w.Boards) == 0 || slices.Contains(w.Boards, board))
}

// Secret returns the signing secret.
func (w *Webhook) Secret() []byte { return w.secret }

// Webhook returns the configured webhook with the given URL.
func (c *Config) Webhook(u string) (*Webhook, bool) {
	for _, w := range c.Webhooks {
		if w.URL == u {
			return w, true
		}
	}
	return nil, false
}

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// maxWebhooks bounds the webhooks list: each one multiplies the deliveries
// of every event.
const maxWebhooks = 32

// parseWebhooks validates the top-level webhooks list. boards maps the
// board ids defined in the file; lookup reads the environment (the secret
// must be set and non-empty at start-up).
func (p *configParser) parseWebhooks(n *yaml.Node, boards map[string]int, lookup func(string) (string, bool)) []*Webhook {
	if n.Kind != yaml.SequenceNode {
		p.addf("field \"webhooks\" (line %d): must be a list of {url, secret_env, events, boards}", n.Line)
		return nil
	}
	if len(n.Content) > maxWebhooks {
		p.addf("field \"webhooks\" (line %d): at most %d webhooks, got %d", n.Line, maxWebhooks, len(n.Content))
		return nil
	}
	var out []*Webhook
	seen := map[string]int{}
	for i, wn := range n.Content {
		name := fmt.Sprintf("webhooks[%d]", i)
		if wn.Kind != yaml.MappingNode {
			p.addf("%s (line %d): a webhook must be a mapping with url, secret_env and events", name, wn.Line)
			continue
		}
		w := &Webhook{}
		ok := true
		bad := func(field string, val *yaml.Node, format string, args ...any) {
			p.addf("%s: field %q (line %d): %s", name, field, val.Line, fmt.Sprintf(format, args...))
			ok = false
		}
		given := map[string]bool{}
		forEachKey(wn, func(key string, val *yaml.Node) {
			if given[key] {
				bad(key, val, "given twice")
				return
			}
			given[key] = true
			switch key {
			case "url":
				if val.Kind != yaml.ScalarNode {
					bad(key, val, "must be a single value")
					return
				}
				u, err := url.Parse(val.Value)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || len(val.Value) > 2000 {
					bad(key, val, "%q is not an absolute http or https URL", val.Value)
					return
				}
				w.URL = val.Value
			case "secret_env":
				if val.Kind != yaml.ScalarNode || !envNamePattern.MatchString(val.Value) {
					bad(key, val, "%q is not an environment variable name", val.Value)
					return
				}
				w.SecretEnv = val.Value
				secret, set := lookup(val.Value)
				if !set || secret == "" {
					bad(key, val, "the environment variable %s holding the signing secret is not set", val.Value)
					return
				}
				w.secret = []byte(secret)
			case "events":
				if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
					bad(key, val, "must be a list of at least one of %s", strings.Join(WebhookEvents, ", "))
					return
				}
				for _, e := range val.Content {
					switch {
					case e.Kind != yaml.ScalarNode || !slices.Contains(WebhookEvents, e.Value):
						bad(key, e, "%q is not one of %s", e.Value, strings.Join(WebhookEvents, ", "))
					case slices.Contains(w.Events, e.Value):
						bad(key, e, "%q is listed twice", e.Value)
					default:
						w.Events = append(w.Events, e.Value)
					}
				}
			case "boards":
				if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
					bad(key, val, "must be a list of board ids (leave it out for every board)")
					return
				}
				for _, e := range val.Content {
					_, known := boards[e.Value]
					switch {
					case e.Kind != yaml.ScalarNode || !known:
						bad(key, e, "%q is not a board of this file", e.Value)
					case slices.Contains(w.Boards, e.Value):
						bad(key, e, "%q is listed twice", e.Value)
					default:
						w.Boards = append(w.Boards, e.Value)
					}
				}
			default:
				bad(key, val, "unknown key; a webhook has url, secret_env, events and boards")
			}
		})
		for _, req := range []string{"url", "secret_env", "events"} {
			if !given[req] {
				p.addf("%s (line %d): field %q is required", name, wn.Line, req)
				ok = false
			}
		}
		if !ok {
			continue
		}
		if line, dup := seen[w.URL]; dup {
			p.addf("%s (line %d): url %q is already used by the webhook on line %d", name, wn.Line, w.URL, line)
			continue
		}
		seen[w.URL] = wn.Line
		out = append(out, w)
	}
	return out
}
