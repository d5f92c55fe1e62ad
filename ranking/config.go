package ranking

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"reflect"
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

// fileSpec is the top level of a boards file as written. A spec struct lists
// the keys of a mapping; a field left zero (Kind 0) was not given.
type fileSpec struct {
	Timezone   yaml.Node `yaml:"timezone"`
	WeekStarts yaml.Node `yaml:"week_starts"`
	Boards     yaml.Node `yaml:"boards"`
	Webhooks   yaml.Node `yaml:"webhooks"`
	Actions    yaml.Node `yaml:"actions"`
}

func (p *configParser) parse(data []byte) *Config {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		p.addf("not valid YAML: %v", err)
		return nil
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		p.addf("the boards file must be a YAML mapping with a boards list")
		return nil
	}
	var s fileSpec
	for _, k := range decodeFields(doc.Content[0], &s, false) {
		if k.first != 0 {
			p.addf("field %q (line %d): given twice, first on line %d", k.key, k.val.Line, k.first)
		} else {
			p.addf("unknown key %q (line %d): the top level has %s", k.key, k.val.Line, andList(specKeys(&s)))
		}
	}
	cfg := &Config{Timezone: "UTC", WeekStarts: time.Monday}
	cfg.Calendar = p.calendar(cfg, &s)
	if s.Boards.Kind != yaml.SequenceNode || len(s.Boards.Content) == 0 {
		p.addf("field \"boards\": a list of at least one board is required")
		return cfg
	}
	seen := map[string]int{}
	for i, bn := range s.Boards.Content {
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
	if s.Webhooks.Kind != 0 {
		cfg.Webhooks = p.parseWebhooks(&s.Webhooks, slices.Collect(maps.Keys(seen)), os.LookupEnv)
	}
	if s.Actions.Kind != 0 {
		cfg.Actions = p.parseActions(&s.Actions, cfg.Boards)
	}
	return cfg
}

// calendar reads timezone and week_starts into cfg.
func (p *configParser) calendar(cfg *Config, s *fileSpec) *Calendar {
	loc := time.UTC
	if tz := &s.Timezone; tz.Kind != 0 {
		cfg.Timezone = tz.Value
		l, err := time.LoadLocation(tz.Value)
		// "Local" is the server's own zone, which differs between machines.
		if err != nil || tz.Value == "" || tz.Value == "Local" || tz.Kind != yaml.ScalarNode {
			p.addf("field \"timezone\" (line %d): time zone %q does not load", tz.Line, tz.Value)
		} else {
			loc = l
		}
	}
	switch ws := &s.WeekStarts; {
	case ws.Kind == 0 || ws.Value == "monday":
		cfg.WeekStarts = time.Monday
	case ws.Value == "sunday":
		cfg.WeekStarts = time.Sunday
	default:
		p.addf("field \"week_starts\" (line %d): %q is not monday or sunday", ws.Line, ws.Value)
	}
	return NewCalendar(loc, cfg.WeekStarts)
}

// strayKey is a key of a mapping that its spec does not take (first 0),
// or one that repeats the key given first on line first.
type strayKey struct {
	key   string
	val   *yaml.Node
	first int
}

// decodeFields sets each field of spec, a pointer to a struct of yaml.Node
// fields tagged with their keys, to its value in the mapping n, as written
// (the decoder would resolve aliases), and returns the stray keys in the
// file's order for the caller to word. The first of a repeated key counts,
// or with lastWins the last, which is then no stray.
func decodeFields(n *yaml.Node, spec any, lastWins bool) []strayKey {
	fields, keys := reflect.ValueOf(spec).Elem(), specKeys(spec)
	var stray []strayKey
	first := map[string]int{} // each key's first line
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		line, repeated := first[key]
		if !repeated {
			first[key] = val.Line
		}
		switch f := slices.Index(keys, key); {
		case repeated && !lastWins:
			stray = append(stray, strayKey{key, val, line})
		case f < 0:
			stray = append(stray, strayKey{key, val, 0})
		default:
			fields.Field(f).Set(reflect.ValueOf(*val))
		}
	}
	return stray
}

// specKeys lists the keys of a spec struct, in its fields' order.
func specKeys(spec any) []string {
	t := reflect.TypeOf(spec).Elem()
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = t.Field(i).Tag.Get("yaml")
	}
	return keys
}

// andList words keys as "a, b and c".
func andList(keys []string) string {
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}

// scope reports the problems of a board or a webhook, each naming it and
// the field; failed holds the fields that had one.
type scope struct {
	p      *configParser
	name   string
	failed map[string]bool
}

func (s *scope) fail(field string, n *yaml.Node, format string, args ...any) {
	s.p.addf("%s: field %q (line %d): %s", s.name, field, n.Line, fmt.Sprintf(format, args...))
	s.failed[field] = true
}

// scalar returns a given field's single value; ok is false when the field
// is absent or (reported) not a single value.
func (s *scope) scalar(field string, n *yaml.Node) (string, bool) {
	if n.Kind == yaml.ScalarNode {
		return n.Value, true
	}
	if n.Kind != 0 {
		s.fail(field, n, "must be a single value")
	}
	return "", false
}

// text sets *dst to a given field's single value, reporting it with bad
// unless it matches pattern (nil matches any).
func (s *scope) text(field string, n *yaml.Node, dst *string, pattern *regexp.Regexp, bad string) {
	if v, ok := s.scalar(field, n); ok {
		if pattern != nil && !pattern.MatchString(v) {
			s.fail(field, n, bad, v)
		}
		*dst = v
	}
}

// oneOf sets *dst to a given field's value if it is one of allowed.
func oneOf[T ~string](s *scope, field string, n *yaml.Node, dst *T, allowed ...string) {
	if v, ok := s.scalar(field, n); ok {
		if !slices.Contains(allowed, v) {
			s.fail(field, n, "%q is not one of %s", v, strings.Join(allowed, ", "))
			return
		}
		*dst = T(v)
	}
}

// wholeNumber sets *dst to a given field's value in [lo, hi]; note says
// what the number counts.
func (s *scope) wholeNumber(field string, n *yaml.Node, dst *int, lo, hi int, note string) {
	if v, ok := s.scalar(field, n); ok {
		k, err := strconv.Atoi(v)
		if err != nil || k < lo || k > hi {
			s.fail(field, n, "%q must be a whole number from %d to %d%s", v, lo, hi, note)
			return
		}
		*dst = k
	}
}

// boardSpec is one board as written.
type boardSpec struct {
	ID          yaml.Node `yaml:"id"`
	Title       yaml.Node `yaml:"title"`
	Unit        yaml.Node `yaml:"unit"`
	Format      yaml.Node `yaml:"format"`
	Order       yaml.Node `yaml:"order"`
	Update      yaml.Node `yaml:"update"`
	Decimals    yaml.Node `yaml:"decimals"`
	MinScore    yaml.Node `yaml:"min_score"`
	MaxScore    yaml.Node `yaml:"max_score"`
	MaxStep     yaml.Node `yaml:"max_step"`
	Ties        yaml.Node `yaml:"ties"`
	Views       yaml.Node `yaml:"views"`
	Keep        yaml.Node `yaml:"keep"`
	Lateness    yaml.Node `yaml:"lateness"`
	ResultsTop  yaml.Node `yaml:"results_top"`
	ResultsKeep yaml.Node `yaml:"results_keep"`
	Stream      yaml.Node `yaml:"stream"`
	Segments    yaml.Node `yaml:"segments"`
	Zones       yaml.Node `yaml:"zones"`
	League      yaml.Node `yaml:"league"`
	Shards      yaml.Node `yaml:"shards"`
}

// parseBoard validates the i-th board: its fields one group at a time,
// then the encoding of each view. It returns nil for a board without id.
func (p *configParser) parseBoard(i int, n *yaml.Node, cal *Calendar) *Board {
	name := fmt.Sprintf("boards[%d]", i)
	if n.Kind != yaml.MappingNode {
		p.addf("%s (line %d): a board must be a mapping with at least an id", name, n.Line)
		return nil
	}
	var spec boardSpec
	stray := decodeFields(n, &spec, false)
	if spec.ID.Kind == yaml.ScalarNode {
		name = fmt.Sprintf("board %q", spec.ID.Value)
	}
	s := &scope{p: p, name: name, failed: map[string]bool{}}
	for _, k := range stray {
		if k.first != 0 {
			s.fail(k.key, k.val, "given twice, first on line %d", k.first)
		} else {
			s.fail(k.key, k.val, "unknown key; a board has %s", strings.Join(specKeys(&spec), ", "))
		}
	}
	b := &Board{Order: Desc, Update: Increment, Ties: TiesFirst, Keep: defaultKeep, Lateness: defaultLateness, Shards: 1,
		ResultsTop: defaultResultsTop, ResultsKeep: defaultResultsKeep}
	s.boardFields(&spec, b)
	if spec.ID.Kind == 0 {
		p.addf("%s (line %d): field \"id\" is required", name, n.Line)
		return nil
	}
	if b.Title == "" {
		b.Title = b.ID
	}
	minText, maxText := s.boardScores(&spec, b, n)
	b.Views = s.views(&spec.Views, b)
	b.tags = shardTags(b.ID, b.Shards)
	// The encoding depends on these fields only: it is checked whenever they
	// are sound, so that one run reports every problem of the file.
	if !s.failed["decimals"] && !s.failed["min_score"] && !s.failed["max_score"] && !s.failed["ties"] {
		s.codecs(b, cal, minText, maxText)
	}
	return b
}

// boardFields reads the fields that stand alone.
func (s *scope) boardFields(spec *boardSpec, b *Board) {
	s.text("id", &spec.ID, &b.ID, boardIDPattern, "%q must match [a-z0-9][a-z0-9-]{0,31}")
	s.text("title", &spec.Title, &b.Title, nil, "")
	s.text("unit", &spec.Unit, &b.Unit, unitPattern, "%q must be 1 to 24 letters, spaces or hyphens, e.g. reads or km")
	oneOf(s, "format", &spec.Format, &b.Format, "number", "duration")
	oneOf(s, "order", &spec.Order, &b.Order, "desc", "asc")
	oneOf(s, "update", &spec.Update, &b.Update, "increment", "best", "latest")
	oneOf(s, "ties", &spec.Ties, &b.Ties, "first", "shared")
	s.wholeNumber("decimals", &spec.Decimals, &b.Decimals, 0, 6, "")
	s.wholeNumber("shards", &spec.Shards, &b.Shards, 1, MaxShards, " (the board's members spread over this many shards)")
	s.wholeNumber("keep", &spec.Keep, &b.Keep, 0, 10000, "")
	s.wholeNumber("results_top", &spec.ResultsTop, &b.ResultsTop, 1, 1000, " (entries in each recorded result)")
	s.wholeNumber("results_keep", &spec.ResultsKeep, &b.ResultsKeep, 0, 10000, " (recorded results kept per view; 0 records none)")
	if v, ok := s.scalar("lateness", &spec.Lateness); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > 400*24*time.Hour {
			s.fail("lateness", &spec.Lateness, "%q must be a duration like 90s, 15m or 48h, from 0 to 9600h", v)
		} else {
			b.Lateness = d
		}
	}
	if v, ok := s.scalar("stream", &spec.Stream); ok {
		if v != "true" && v != "false" {
			s.fail("stream", &spec.Stream, "%q must be true or false", v)
		}
		b.Stream = v == "true"
	}
	if spec.Segments.Kind != 0 {
		b.Segments = s.segments(&spec.Segments)
	}
	if spec.Zones.Kind != 0 {
		b.Zones = s.zones(&spec.Zones)
	}
	if spec.League.Kind != 0 {
		b.League = s.league(&spec.League)
	}
}

// boardScores reads the bounds and max_step with the board's decimals and
// update, wherever their keys stand, so that "12.5" with decimals 1 is
// exact and with decimals 0 is refused; it returns the bounds as written.
func (s *scope) boardScores(spec *boardSpec, b *Board, board *yaml.Node) (minText, maxText string) {
	// A bound not given as a single value has its problems on the board's line.
	bound := func(field string, n *yaml.Node, text string) (string, *yaml.Node, int64, bool) {
		at := board
		if v, ok := s.scalar(field, n); ok {
			text, at = v, n
		}
		v, err := parseScaled(text, b.Decimals)
		if err != nil {
			s.fail(field, at, "%s", ErrorMessage(err))
		}
		return text, at, v, err == nil
	}
	minText, minAt, minV, minOK := bound("min_score", &spec.MinScore, "0")
	maxText, _, maxV, maxOK := bound("max_score", &spec.MaxScore, defaultMax)
	if minOK && maxOK {
		if minV >= maxV {
			s.fail("min_score", minAt, "min_score %s must be below max_score %s", minText, maxText)
		}
		b.Min, b.Max = minV, maxV
	}
	stepText, given := s.scalar("max_step", &spec.MaxStep)
	if !given {
		return minText, maxText
	}
	step, err := parseScaled(stepText, b.Decimals)
	switch n := &spec.MaxStep; {
	case b.Update != Increment:
		s.fail("max_step", n, "only applies to update: increment, not %s (a %s event sets the score, bounded by min_score and max_score)", b.Update, b.Update)
	case err != nil:
		s.fail("max_step", n, "%s", ErrorMessage(err))
	case step <= 0:
		s.fail("max_step", n, "%s must be above 0", stepText)
	case !s.failed["min_score"] && !s.failed["max_score"] && step > b.Max-b.Min:
		s.fail("max_step", n, "%s is larger than max_score - min_score (%s), which no step can exceed", stepText, formatScaled(b.Max-b.Min, b.Decimals))
	default:
		b.MaxStep = step
	}
	return minText, maxText
}

// views returns the board's valid views and reports the others; a board
// without the field has the default views, and their problems line 0.
func (s *scope) views(n *yaml.Node, b *Board) []View {
	names := defaultViews
	if n.Kind != 0 {
		if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
			s.fail("views", n, "must be a non-empty list like [day, week, month, all]")
			return nil
		}
		names = nil
		for _, vn := range n.Content {
			names = append(names, vn.Value)
		}
	}
	var views []View
	seen := map[string]bool{}
	for _, name := range names {
		v, err := ParseView(name)
		switch {
		case err != nil:
			s.fail("views", n, "%s", ErrorMessage(err))
		case seen[name]:
			s.fail("views", n, "view %q is listed twice", name)
		case v.Kind == Window && b.Update != Increment:
			seen[name] = true
			s.fail("views", n, "rolling view %q needs update: increment, not %s", name, b.Update)
		default:
			seen[name] = true
			views = append(views, v)
		}
	}
	return views
}

// segments returns a board's segment names, reporting bad ones.
func (s *scope) segments(n *yaml.Node) []string {
	bad := func(format string, args ...any) { s.fail("segments", n, format, args...) }
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
	return names
}

// codecs derives each view's score codec, reporting the views whose
// scores cannot all be encoded exactly.
func (s *scope) codecs(b *Board, cal *Calendar, minText, maxText string) {
	b.codecs = map[string]codec{}
	for _, v := range b.Views {
		cd, fits := newCodec(b, v, cal.maxPeriodLength(v))
		switch {
		case !fits && v.Kind == Window:
			s.p.addf("%s: field \"views\": rolling view %q sums %d day totals of up to ±%s each (the widest one-day change min_score and max_score allow), and cannot encode every such sum exactly, even at a 1h tie resolution; narrow min_score/max_score, lower decimals, shorten the window, or use ties: shared", s.name, v.Name, v.Days, formatScaled(b.dayBound(), b.Decimals))
		case !fits:
			s.p.addf("%s: field \"views\": view %q cannot encode scores from %s to %s with %d decimals exactly, even at a 1h tie resolution; narrow min_score/max_score, lower decimals, or use ties: shared", s.name, v.Name, minText, maxText, b.Decimals)
		default:
			b.codecs[v.Name] = cd
		}
	}
	if l := b.League; l != nil {
		lv := l.leagueView()
		if cd, fits := newCodec(b, lv, cal.maxPeriodLength(lv)); fits {
			b.codecs[lv.Name] = cd
		} else {
			s.p.addf("%s: field \"league\": rounds of a %s cannot encode scores from %s to %s with %d decimals exactly, even at a 1h tie resolution; narrow min_score/max_score, lower decimals, or use ties: shared", s.name, l.Cycle.Name, minText, maxText, b.Decimals)
		}
	}
	if b.hasWindows() {
		// Day totals feed the windows; a day is never longer than a window
		// and ±S is never wider than ±N·S, so their codec fits whenever the
		// windows' does.
		if cd, fits := newCodec(b, dayTotals, cal.maxPeriodLength(dayTotals)); fits {
			b.codecs[dayTotals.Name] = cd
		}
	}
}
