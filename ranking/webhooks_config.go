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
	EventLeagueFinal   = "league.final" // a league round's cohorts are all recorded (contract 16)
)

// WebhookEvents lists every event type a webhook may subscribe to.
var WebhookEvents = []string{EventPeriodFinal, EventResultAmended, EventMemberRemoved, EventLeagueFinal}

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

// webhookSpec is one webhook as written.
type webhookSpec struct {
	URL       yaml.Node `yaml:"url"`
	SecretEnv yaml.Node `yaml:"secret_env"`
	Events    yaml.Node `yaml:"events"`
	Boards    yaml.Node `yaml:"boards"`
}

// parseWebhooks validates the top-level webhooks list. boards are the
// board ids defined in the file; lookup reads the environment (the secret
// must be set and non-empty at start-up).
func (p *configParser) parseWebhooks(n *yaml.Node, boards []string, lookup func(string) (string, bool)) []*Webhook {
	if n.Kind != yaml.SequenceNode {
		p.addf("field \"webhooks\" (line %d): must be a list of {url, secret_env, events, boards}", n.Line)
		return nil
	}
	if len(n.Content) > maxWebhooks {
		p.addf("field \"webhooks\" (line %d): at most %d webhooks, got %d", n.Line, maxWebhooks, len(n.Content))
		return nil
	}
	var out []*Webhook
	urls := map[string]int{} // line of the webhook that has each url
	for i, wn := range n.Content {
		if w := p.parseWebhook(i, wn, boards, lookup, urls); w != nil {
			out = append(out, w)
		}
	}
	return out
}

// parseWebhook validates the i-th webhook, whose url must not be one of
// urls; it returns nil if it has a problem.
func (p *configParser) parseWebhook(i int, n *yaml.Node, boards []string, lookup func(string) (string, bool), urls map[string]int) *Webhook {
	name := fmt.Sprintf("webhooks[%d]", i)
	if n.Kind != yaml.MappingNode {
		p.addf("%s (line %d): a webhook must be a mapping with url, secret_env and events", name, n.Line)
		return nil
	}
	var spec webhookSpec
	s := &scope{p: p, name: name, failed: map[string]bool{}}
	for _, k := range decodeFields(n, &spec, false) {
		if k.first != 0 {
			s.fail(k.key, k.val, "given twice")
		} else {
			s.fail(k.key, k.val, "unknown key; a webhook has %s", andList(specKeys(&spec)))
		}
	}
	w := &Webhook{}
	if v, ok := s.scalar("url", &spec.URL); ok {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || len(v) > 2000 {
			s.fail("url", &spec.URL, "%q is not an absolute http or https URL", v)
		}
		w.URL = v
	}
	if env := &spec.SecretEnv; env.Kind != 0 {
		if env.Kind != yaml.ScalarNode || !envNamePattern.MatchString(env.Value) {
			s.fail("secret_env", env, "%q is not an environment variable name", env.Value)
		} else if secret, set := lookup(env.Value); !set || secret == "" {
			s.fail("secret_env", env, "the environment variable %s holding the signing secret is not set", env.Value)
		} else {
			w.SecretEnv, w.secret = env.Value, []byte(secret)
		}
	}
	events := strings.Join(WebhookEvents, ", ")
	w.Events = s.list("events", &spec.Events, WebhookEvents, "must be a list of at least one of "+events, "%q is not one of "+events)
	w.Boards = s.list("boards", &spec.Boards, boards, "must be a list of board ids (leave it out for every board)", "%q is not a board of this file")
	// url, secret_env and events, the first keys, are required.
	for i, val := range []*yaml.Node{&spec.URL, &spec.SecretEnv, &spec.Events} {
		if field := specKeys(&spec)[i]; val.Kind == 0 {
			p.addf("%s (line %d): field %q is required", name, n.Line, field)
			s.failed[field] = true
		}
	}
	if len(s.failed) > 0 {
		return nil
	}
	if line, dup := urls[w.URL]; dup {
		p.addf("%s (line %d): url %q is already used by the webhook on line %d", name, n.Line, w.URL, line)
		return nil
	}
	urls[w.URL] = n.Line
	return w
}

// list returns the values of a given non-empty list field, reporting each
// one that is not known (wording it with unknown) or listed twice.
func (s *scope) list(field string, n *yaml.Node, known []string, notList, unknown string) []string {
	if n.Kind == 0 {
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		s.fail(field, n, "%s", notList)
		return nil
	}
	var out []string
	for _, e := range n.Content {
		switch {
		case e.Kind != yaml.ScalarNode || !slices.Contains(known, e.Value):
			s.fail(field, e, unknown, e.Value)
		case slices.Contains(out, e.Value):
			s.fail(field, e, "%q is listed twice", e.Value)
		default:
			out = append(out, e.Value)
		}
	}
	return out
}
