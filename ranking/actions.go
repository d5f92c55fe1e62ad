package ranking

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Action is one named action of the boards file (contract section 12): an
// event posted to it applies its value to each of its boards.
type Action struct {
	Name    string
	Targets []ActionTarget
}

// ActionTarget is one board an action feeds, with the value it adds
// (scaled by the board's decimals).
type ActionTarget struct {
	Board string
	Value int64
}

// Action returns the action with the given name.
func (c *Config) Action(name string) (*Action, bool) {
	for _, a := range c.Actions {
		if a.Name == name {
			return a, true
		}
	}
	return nil, false
}

var actionNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// maxActions bounds the actions of a boards file, maxActionTargets the
// boards of one action (each is one write).
const (
	maxActions       = 1000
	maxActionTargets = 32
)

// parseActions validates the top-level actions mapping: each name maps to
// a list of {board, value}; value (default 1) must be one the board takes.
func (p *configParser) parseActions(n *yaml.Node, boards []*Board) []*Action {
	if n.Kind != yaml.MappingNode {
		p.addf("field \"actions\" (line %d): must map action names to lists of {board, value}", n.Line)
		return nil
	}
	if len(n.Content)/2 > maxActions {
		p.addf("field \"actions\" (line %d): at most %d actions, got %d", n.Line, maxActions, len(n.Content)/2)
		return nil
	}
	byID := map[string]*Board{}
	for _, b := range boards {
		byID[b.ID] = b
	}
	var out []*Action
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, val := n.Content[i].Value, n.Content[i+1]
		where := fmt.Sprintf("action %q (line %d)", name, val.Line)
		if !actionNamePattern.MatchString(name) {
			p.addf("%s: the name must match [a-z0-9][a-z0-9_.-]{0,63}", where)
			continue
		}
		if line, dup := seen[name]; dup {
			p.addf("%s: given twice, first on line %d", where, line)
			continue
		}
		seen[name] = val.Line
		if val.Kind != yaml.SequenceNode || len(val.Content) == 0 || len(val.Content) > maxActionTargets {
			p.addf("%s: must be a list of 1 to %d {board, value}", where, maxActionTargets)
			continue
		}
		a := &Action{Name: name}
		before := len(p.problems)
		for j, tn := range val.Content {
			if t, ok := p.parseActionTarget(fmt.Sprintf("%s: entry %d (line %d)", where, j, tn.Line), tn, byID, a.Targets); ok {
				a.Targets = append(a.Targets, t)
			}
		}
		if len(p.problems) == before {
			out = append(out, a)
		}
	}
	return out
}

// entrySpec is one {board, value} of an action as written.
type entrySpec struct {
	Board yaml.Node `yaml:"board"`
	Value yaml.Node `yaml:"value"`
}

// parseActionTarget validates one entry of an action, at, given the
// entries before it; ok says whether it has a value its board takes.
func (p *configParser) parseActionTarget(at string, n *yaml.Node, byID map[string]*Board, before []ActionTarget) (t ActionTarget, ok bool) {
	if n.Kind != yaml.MappingNode {
		p.addf("%s: must be a mapping {board, value}", at)
		return t, false
	}
	var spec entrySpec
	// A key given twice takes its last value, as it always has.
	for _, k := range decodeFields(n, &spec, true) {
		p.addf("%s: unknown key %q; an entry has %s", at, k.key, andList(specKeys(&spec)))
	}
	if spec.Board.Kind != yaml.ScalarNode {
		p.addf("%s: field \"board\" is required", at)
		return t, false
	}
	b := byID[spec.Board.Value]
	if b == nil {
		p.addf("%s: board %q is not a board of this file", at, spec.Board.Value)
		return t, false
	}
	for _, o := range before {
		if o.Board == b.ID {
			p.addf("%s: board %q is listed twice", at, b.ID)
		}
	}
	text := "1"
	if v := &spec.Value; v.Kind != 0 {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!str" && v.Style != 0 {
			p.addf("%s: value must be a number", at)
			return t, false
		}
		text = v.Value
	}
	value, err := b.ParseScore(text)
	if err == nil {
		err = b.validate(Event{Member: "m", Value: value})
	}
	if err != nil {
		p.addf("%s: value %s: board %q would refuse it: %v", at, text, b.ID, ErrorMessage(err))
		return t, false
	}
	return ActionTarget{Board: b.ID, Value: value}, true
}

// ActionResult is one board's outcome of an action: its write or its error.
type ActionResult struct {
	Board  string
	Result WriteResult
	Err    error
}

// Act applies action name's value to each of its boards for the event ev
// (its Value is ignored). The event is checked against every board first:
// one a board would refuse before Redis is the error, and nothing is
// written. Each board's update is atomic; across boards, an event with an
// ID is idempotent per board, so retrying a partly applied action
// completes it without counting anything twice. A board that fails has
// its error in its ActionResult; the others stand. Each board gets the
// event's segments it has; a segment no board of the action has is
// refused.
func (s *Store) Act(ctx context.Context, name string, ev Event) ([]ActionResult, error) {
	a, ok := s.cfg.Action(name)
	if !ok {
		return nil, Errorf(ENOTFOUND, "no action %q", name)
	}
	// Each board takes the segments it has; a name no board of the action
	// has is refused.
	for name := range ev.Segments {
		found := false
		for _, t := range a.Targets {
			b, _ := s.cfg.Board(t.Board)
			found = found || b.HasSegment(name)
		}
		if !found {
			return nil, Errorf(EINVALID, "no board of action %q has the segment %q", a.Name, name)
		}
	}
	events := make([]Event, len(a.Targets))
	for i, t := range a.Targets {
		b, _ := s.cfg.Board(t.Board)
		e := ev
		e.Value = t.Value
		e.Segments = nil
		for name, val := range ev.Segments {
			if b.HasSegment(name) {
				if e.Segments == nil {
					e.Segments = map[string]string{}
				}
				e.Segments[name] = val
			}
		}
		if err := b.validate(e); err != nil {
			return nil, err
		}
		events[i] = e
	}
	// The boards are written concurrently, so each has the whole of ctx's
	// deadline: a board whose Redis node stalls cannot use up the time of
	// the boards after it.
	out := make([]ActionResult, len(a.Targets))
	var wg sync.WaitGroup
	for i, t := range a.Targets {
		out[i].Board = t.Board
		wg.Go(func() {
			if s.beforeActionBoard != nil {
				if err := s.beforeActionBoard(t.Board); err != nil {
					out[i].Err = err
					return
				}
			}
			out[i].Result, out[i].Err = s.Write(ctx, t.Board, events[i])
		})
	}
	wg.Wait()
	return out, nil
}
