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
	forEachKey(n, func(name string, val *yaml.Node) {
		where := fmt.Sprintf("action %q (line %d)", name, val.Line)
		if !actionNamePattern.MatchString(name) {
			p.addf("%s: the name must match [a-z0-9][a-z0-9_.-]{0,63}", where)
			return
		}
		if line, dup := seen[name]; dup {
			p.addf("%s: given twice, first on line %d", where, line)
			return
		}
		seen[name] = val.Line
		if val.Kind != yaml.SequenceNode || len(val.Content) == 0 || len(val.Content) > maxActionTargets {
			p.addf("%s: must be a list of 1 to %d {board, value}", where, maxActionTargets)
			return
		}
		a := &Action{Name: name}
		ok := true
		for i, tn := range val.Content {
			at := fmt.Sprintf("%s: entry %d (line %d)", where, i, tn.Line)
			if tn.Kind != yaml.MappingNode {
				p.addf("%s: must be a mapping {board, value}", at)
				ok = false
				continue
			}
			var boardNode, valueNode *yaml.Node
			forEachKey(tn, func(key string, v *yaml.Node) {
				switch key {
				case "board":
					boardNode = v
				case "value":
					valueNode = v
				default:
					p.addf("%s: unknown key %q; an entry has board and value", at, key)
					ok = false
				}
			})
			if boardNode == nil || boardNode.Kind != yaml.ScalarNode {
				p.addf("%s: field \"board\" is required", at)
				ok = false
				continue
			}
			b := byID[boardNode.Value]
			if b == nil {
				p.addf("%s: board %q is not a board of this file", at, boardNode.Value)
				ok = false
				continue
			}
			for _, t := range a.Targets {
				if t.Board == b.ID {
					p.addf("%s: board %q is listed twice", at, b.ID)
					ok = false
				}
			}
			text := "1"
			if valueNode != nil {
				if valueNode.Kind != yaml.ScalarNode || valueNode.Tag == "!!str" && valueNode.Style != 0 {
					p.addf("%s: value must be a number", at)
					ok = false
					continue
				}
				text = valueNode.Value
			}
			v, err := b.ParseScore(text)
			if err == nil {
				err = b.validate(Event{Member: "m", Value: v})
			}
			if err != nil {
				p.addf("%s: value %s: board %q would refuse it: %v", at, text, b.ID, ErrorMessage(err))
				ok = false
				continue
			}
			a.Targets = append(a.Targets, ActionTarget{Board: b.ID, Value: v})
		}
		if ok {
			out = append(out, a)
		}
	})
	return out
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
