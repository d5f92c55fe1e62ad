package ranking

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is a validated boards file.
type Config struct {
	Timezone   string
	WeekStarts time.Weekday
	Boards     []*Board
	Calendar   *Calendar
	Webhooks   []*Webhook
	Actions    []*Action
}

// Board returns the board with the given id.
func (c *Config) Board(id string) (*Board, bool) {
	for _, b := range c.Boards {
		if b.ID == id {
			return b, true
		}
	}
	return nil, false
}

// ConfigError lists every problem found in a boards file, one per line.
type ConfigError struct {
	Problems []string
}

func (e *ConfigError) Error() string {
	return "invalid boards file:\n  " + strings.Join(e.Problems, "\n  ")
}

// LoadConfigFile reads and validates a boards file.
func LoadConfigFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read boards file: %w", err)
	}
	return ParseConfig(data)
}

var boardIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// unitPattern is a board's unit: a word or two, shown after scores.
var unitPattern = regexp.MustCompile(`^[\p{L}][\p{L} -]{0,23}$`)

// Defaults of the boards file (contract section 2).
var (
	defaultViews    = []string{"day", "week", "month", "all"}
	defaultMax      = "1000000000"
	defaultLateness = time.Hour
	defaultKeep     = 12

	defaultResultsTop  = 10
	defaultResultsKeep = 100
)

// ParseConfig validates a boards file and derives each view's score codec.
// It reports every problem at once, each naming the board and the field.
func ParseConfig(data []byte) (*Config, error) {
	p := &configParser{}
	cfg := p.parse(data)
	if len(p.problems) > 0 {
		return nil, &ConfigError{Problems: p.problems}
	}
	return cfg, nil
}

type configParser struct {
	problems []string
}

func (p *configParser) addf(format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

func (p *configParser) parse(data []byte) *Config {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		p.addf("not valid YAML: %v", err)
		return nil
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		p.addf("the boards file must be a YAML mapping with a boards list")
		return nil
	}
	cfg := &Config{Timezone: "UTC", WeekStarts: time.Monday}
	loc := time.UTC
	var boardsNode, webhooksNode, actionsNode *yaml.Node
	seenKeys := map[string]int{}
	forEachKey(doc.Content[0], func(key string, val *yaml.Node) {
		if line, dup := seenKeys[key]; dup {
			p.addf("field %q (line %d): given twice, first on line %d", key, val.Line, line)
			return
		}
		seenKeys[key] = val.Line
		switch key {
		case "timezone":
			cfg.Timezone = val.Value
			l, err := time.LoadLocation(val.Value)
			// "Local" loads the server's own zone, which differs between
			// machines; periods must not.
			if err != nil || val.Value == "" || val.Value == "Local" || val.Kind != yaml.ScalarNode {
				p.addf("field \"timezone\" (line %d): time zone %q does not load", val.Line, val.Value)
			} else {
				loc = l
			}
		case "week_starts":
			switch val.Value {
			case "monday":
				cfg.WeekStarts = time.Monday
			case "sunday":
				cfg.WeekStarts = time.Sunday
			default:
				p.addf("field \"week_starts\" (line %d): %q is not monday or sunday", val.Line, val.Value)
			}
		case "boards":
			boardsNode = val
		case "webhooks":
			webhooksNode = val
		case "actions":
			actionsNode = val
		default:
			p.addf("unknown key %q (line %d): the top level has timezone, week_starts, boards, webhooks and actions", key, val.Line)
		}
	})
	cfg.Calendar = NewCalendar(loc, cfg.WeekStarts)
	if boardsNode == nil || boardsNode.Kind != yaml.SequenceNode || len(boardsNode.Content) == 0 {
		p.addf("field \"boards\": a list of at least one board is required")
		return cfg
	}
	seen := map[string]int{}
	for i, bn := range boardsNode.Content {
		b := p.parseBoard(i, bn, cfg.Calendar)
		if b == nil {
			continue
		}
		if line, dup := seen[b.ID]; dup {
			p.addf("board %q (line %d): duplicate id, first defined on line %d", b.ID, bn.Line, line)
			continue
		}
		seen[b.ID] = bn.Line
		cfg.Boards = append(cfg.Boards, b)
	}
	if webhooksNode != nil {
		cfg.Webhooks = p.parseWebhooks(webhooksNode, seen, os.LookupEnv)
	}
	if actionsNode != nil {
		cfg.Actions = p.parseActions(actionsNode, cfg.Boards)
	}
	return cfg
}

// forEachKey calls fn for each key of a mapping node, in order.
func forEachKey(m *yaml.Node, fn func(key string, val *yaml.Node)) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		fn(m.Content[i].Value, m.Content[i+1])
	}
}

func (p *configParser) parseBoard(i int, n *yaml.Node, cal *Calendar) *Board {
	name := fmt.Sprintf("boards[%d]", i)
	if n.Kind != yaml.MappingNode {
		p.addf("%s (line %d): a board must be a mapping with at least an id", name, n.Line)
		return nil
	}
	fields := map[string]*yaml.Node{}
	var keys []string
	type keyVal struct {
		key string
		val *yaml.Node
	}
	var dups []keyVal // keys given more than once, after the first
	forEachKey(n, func(key string, val *yaml.Node) {
		if _, dup := fields[key]; dup {
			dups = append(dups, keyVal{key, val})
			return
		}
		fields[key] = val
		keys = append(keys, key)
	})
	if id := fields["id"]; id != nil && id.Kind == yaml.ScalarNode {
		name = fmt.Sprintf("board %q", id.Value)
	}
	bad := func(field string, val *yaml.Node, format string, args ...any) {
		p.addf("%s: field %q (line %d): %s", name, field, val.Line, fmt.Sprintf(format, args...))
	}
	b := &Board{Order: Desc, Update: Increment, Ties: TiesFirst, Keep: defaultKeep, Lateness: defaultLateness,
		ResultsTop: defaultResultsTop, ResultsKeep: defaultResultsKeep}
	failed := map[string]bool{} // fields with a problem
	fail := func(field string, val *yaml.Node, format string, args ...any) {
		bad(field, val, format, args...)
		failed[field] = true
	}
	scalar := func(field string, val *yaml.Node) (string, bool) {
		if val.Kind != yaml.ScalarNode {
			fail(field, val, "must be a single value")
			return "", false
		}
		return val.Value, true
	}
	oneOf := func(field string, val *yaml.Node, allowed ...string) (string, bool) {
		s, isScalar := scalar(field, val)
		if !isScalar {
			return "", false
		}
		for _, a := range allowed {
			if s == a {
				return s, true
			}
		}
		fail(field, val, "%q is not one of %s", s, strings.Join(allowed, ", "))
		return "", false
	}
	minText, maxText := "0", defaultMax
	var minNode, maxNode *yaml.Node
	var viewsNode *yaml.Node
	var stepText string
	var stepNode *yaml.Node // max_step, parsed once decimals and bounds are known
	for _, d := range dups {
		fail(d.key, d.val, "given twice, first on line %d", fields[d.key].Line)
	}
	for _, key := range keys {
		val := fields[key]
		switch key {
		case "id":
			if s, isScalar := scalar(key, val); isScalar {
				if !boardIDPattern.MatchString(s) {
					fail(key, val, "%q must match [a-z0-9][a-z0-9-]{0,31}", s)
				}
				b.ID = s
			}
		case "title":
			if s, isScalar := scalar(key, val); isScalar {
				b.Title = s
			}
		case "unit":
			if s, isScalar := scalar(key, val); isScalar {
				if !unitPattern.MatchString(s) {
					fail(key, val, "%q must be 1 to 24 letters, spaces or hyphens, e.g. reads or km", s)
				}
				b.Unit = s
			}
		case "format":
			if s, good := oneOf(key, val, "number", "duration"); good {
				b.Format = s
			}
		case "order":
			if s, good := oneOf(key, val, "desc", "asc"); good {
				b.Order = Order(s)
			}
		case "update":
			if s, good := oneOf(key, val, "increment", "best", "latest"); good {
				b.Update = Update(s)
			}
		case "ties":
			if s, good := oneOf(key, val, "first", "shared"); good {
				b.Ties = Ties(s)
			}
		case "decimals":
			if s, isScalar := scalar(key, val); isScalar {
				d, err := strconv.Atoi(s)
				if err != nil || d < 0 || d > 6 {
					fail(key, val, "%q must be a whole number from 0 to 6", s)
				} else {
					b.Decimals = d
				}
			}
		case "min_score":
			if s, isScalar := scalar(key, val); isScalar {
				minText, minNode = s, val
			}
		case "max_score":
			if s, isScalar := scalar(key, val); isScalar {
				maxText, maxNode = s, val
			}
		case "views":
			viewsNode = val
		case "max_step":
			if s, isScalar := scalar(key, val); isScalar {
				stepText, stepNode = s, val
			}
		case "keep":
			if s, isScalar := scalar(key, val); isScalar {
				k, err := strconv.Atoi(s)
				if err != nil || k < 0 || k > 10000 {
					fail(key, val, "%q must be a whole number from 0 to 10000", s)
				} else {
					b.Keep = k
				}
			}
		case "lateness":
			if s, isScalar := scalar(key, val); isScalar {
				d, err := time.ParseDuration(s)
				if err != nil || d < 0 || d > 400*24*time.Hour {
					fail(key, val, "%q must be a duration like 90s, 15m or 48h, from 0 to 9600h", s)
				} else {
					b.Lateness = d
				}
			}
		case "results_top":
			if s, isScalar := scalar(key, val); isScalar {
				k, err := strconv.Atoi(s)
				if err != nil || k < 1 || k > 1000 {
					fail(key, val, "%q must be a whole number from 1 to 1000 (entries in each recorded result)", s)
				} else {
					b.ResultsTop = k
				}
			}
		case "results_keep":
			if s, isScalar := scalar(key, val); isScalar {
				k, err := strconv.Atoi(s)
				if err != nil || k < 0 || k > 10000 {
					fail(key, val, "%q must be a whole number from 0 to 10000 (recorded results kept per view; 0 records none)", s)
				} else {
					b.ResultsKeep = k
				}
			}
		case "stream":
			if s, isScalar := scalar(key, val); isScalar {
				switch s {
				case "true":
					b.Stream = true
				case "false":
					b.Stream = false
				default:
					fail(key, val, "%q must be true or false", s)
				}
			}
		case "segments":
			b.Segments = p.parseSegments(name, val, failed)
		default:
			fail(key, val, "unknown key; a board has id, title, unit, format, order, update, decimals, min_score, max_score, max_step, ties, views, keep, lateness, results_top, results_keep, stream, segments")
		}
	}
	if fields["id"] == nil {
		p.addf("%s (line %d): field \"id\" is required", name, n.Line)
		return nil
	}
	if b.Title == "" {
		b.Title = b.ID
	}
	// Bounds are parsed once decimals is known, so "12.5" with decimals 1 is
	// exact and with decimals 0 is refused.
	lineOf := func(v *yaml.Node) *yaml.Node {
		if v == nil {
			return n
		}
		return v
	}
	minV, err := parseScaled(minText, b.Decimals)
	if err != nil {
		fail("min_score", lineOf(minNode), "%s", ErrorMessage(err))
	}
	maxV, err2 := parseScaled(maxText, b.Decimals)
	if err2 != nil {
		fail("max_score", lineOf(maxNode), "%s", ErrorMessage(err2))
	}
	if err == nil && err2 == nil {
		if minV >= maxV {
			fail("min_score", lineOf(minNode), "min_score %s must be below max_score %s", minText, maxText)
		}
		b.Min, b.Max = minV, maxV
	}
	if stepNode != nil {
		step, err := parseScaled(stepText, b.Decimals)
		switch {
		case b.Update != Increment:
			fail("max_step", stepNode, "only applies to update: increment, not %s (a %s event sets the score, bounded by min_score and max_score)", b.Update, b.Update)
		case err != nil:
			fail("max_step", stepNode, "%s", ErrorMessage(err))
		case step <= 0:
			fail("max_step", stepNode, "%s must be above 0", stepText)
		case !failed["min_score"] && !failed["max_score"] && step > b.Max-b.Min:
			fail("max_step", stepNode, "%s is larger than max_score - min_score (%s), which no step can exceed", stepText, formatScaled(b.Max-b.Min, b.Decimals))
		default:
			b.MaxStep = step
		}
	}
	b.Views = p.parseViews(name, b, viewsNode)
	// The encoding depends on these fields only: it is checked whenever they
	// are sound, so that one run reports every problem of the file.
	if failed["decimals"] || failed["min_score"] || failed["max_score"] || failed["ties"] {
		return b
	}
	b.codecs = map[string]codec{}
	for _, v := range b.Views {
		cd, fits := newCodec(b, v, cal.maxPeriodLength(v))
		if !fits && v.Kind == Window {
			p.addf("%s: field \"views\": rolling view %q sums %d day totals of up to ±%s each (the widest one-day change min_score and max_score allow), and cannot encode every such sum exactly, even at a 1h tie resolution; narrow min_score/max_score, lower decimals, shorten the window, or use ties: shared", name, v.Name, v.Days, formatScaled(b.dayBound(), b.Decimals))
			continue
		}
		if !fits {
			p.addf("%s: field \"views\": view %q cannot encode scores from %s to %s with %d decimals exactly, even at a 1h tie resolution; narrow min_score/max_score, lower decimals, or use ties: shared", name, v.Name, minText, maxText, b.Decimals)
			continue
		}
		b.codecs[v.Name] = cd
	}
	if b.hasWindows() {
		// Day totals feed the windows; a day is never longer than a window
		// and ±S is never wider than ±N·S, so their codec fits whenever the
		// windows' does.
		if cd, fits := newCodec(b, dayTotals, cal.maxPeriodLength(dayTotals)); fits {
			b.codecs[dayTotals.Name] = cd
		}
	}
	return b
}

// parseViews returns the board's valid views and reports the others.
func (p *configParser) parseViews(name string, b *Board, n *yaml.Node) []View {
	names := defaultViews
	if n != nil {
		if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
			p.addf("%s: field \"views\" (line %d): must be a non-empty list like [day, week, month, all]", name, n.Line)
			return nil
		}
		names = nil
		for _, vn := range n.Content {
			names = append(names, vn.Value)
		}
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	var views []View
	seen := map[string]bool{}
	for _, s := range names {
		v, err := ParseView(s)
		if err != nil {
			p.addf("%s: field \"views\" (line %d): %s", name, line, ErrorMessage(err))
			continue
		}
		if seen[s] {
			p.addf("%s: field \"views\" (line %d): view %q is listed twice", name, line, s)
			continue
		}
		seen[s] = true
		if v.Kind == Window && b.Update != Increment {
			p.addf("%s: field \"views\" (line %d): rolling view %q needs update: increment, not %s", name, line, s, b.Update)
			continue
		}
		views = append(views, v)
	}
	return views
}

// parseSegments returns a board's segment names, reporting bad ones.
func (p *configParser) parseSegments(name string, n *yaml.Node, failed map[string]bool) []string {
	bad := func(format string, args ...any) {
		p.addf("%s: field \"segments\" (line %d): %s", name, n.Line, fmt.Sprintf(format, args...))
		failed["segments"] = true
	}
	if n.Kind != yaml.SequenceNode {
		bad("must be a list of up to %d names like [country, team]", MaxSegmentNames)
		return nil
	}
	if len(n.Content) > MaxSegmentNames {
		bad("%d names given; a board has at most %d", len(n.Content), MaxSegmentNames)
	}
	var names []string
	for _, sn := range n.Content {
		if sn.Kind != yaml.ScalarNode || !segmentNamePattern.MatchString(sn.Value) {
			bad("%q must match [a-z][a-z0-9_]{0,15}", sn.Value)
			continue
		}
		if slices.Contains(names, sn.Value) {
			bad("segment %q is listed twice", sn.Value)
			continue
		}
		names = append(names, sn.Value)
	}
	if len(names) > MaxSegmentNames {
		names = names[:MaxSegmentNames]
	}
	return names
}
