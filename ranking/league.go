package ranking

// Leagues (contract section 16). A board with a league splits each round,
// one period of the league's cycle calendar view, into cohorts of at most
// cohort_size members per tier. Everything of a round lives in four keys
// (see keys.go): the round's standings, a hidden view "~lg" kept by
// apply.lua like any calendar view but only for events counted in an open
// round; the placement of each member (member -> tier and cohort as one
// number, so a cohort's members are one ZRANGEBYSCORE); and a hash of
// counters, decided markers and outcomes. A member's last round played is
// its own key, so a write names it in KEYS from the event's member.
//
// Placement happens in apply.lua's place step, in the same call as the
// event's views. A closed cohort is decided (outcomes from its standings at
// the close) by decide.lua, once, whichever asks first: a write placing one
// of its members in a later round (apply.lua replies -4 and the write
// calls Store.decideCohorts before trying again), or the league recorder
// (Store.DecideLeagues) after the round ends. Each decide.lua call reads
// at most decideMembers members, or one cohort when a cohort is larger.

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Tier is one level of a league, lowest first in League.Tiers.
type Tier struct {
	ID    string
	Title string
}

// League is a board's league configuration.
type League struct {
	// Cycle is the calendar view whose periods are the league's rounds
	// (the board may or may not show it).
	Cycle      View
	Tiers      []Tier
	CohortSize int
	Promote    int // top of a cohort moving up (none from the top tier)
	Demote     int // bottom of a cohort moving down (none from the lowest)
}

// Zone is a named line after a rank: the ranks 1..Top that are not in an
// earlier zone.
type Zone struct {
	Title string
	Top   int
}

// MaxZones bounds a board's zones.
const MaxZones = 5

// leagueView is the hidden view holding each round's standings: its
// periods are the cycle's, its codec the cycle view's.
func (l *League) leagueView() View { return View{Name: leagueViewName, Kind: l.Cycle.Kind} }

// leagueViewName names the hidden view of rounds; "~" keeps it out of the
// change feed and away from every view name a user can give.
const leagueViewName = "~lg"

// Tier returns the tier with the given id and its 1-based level.
func (l *League) Tier(id string) (Tier, int, bool) {
	for i, t := range l.Tiers {
		if t.ID == id {
			return t, i + 1, true
		}
	}
	return Tier{}, 0, false
}

// Zones returns the promotion and demotion zone sizes of a cohort of n
// members in tier level (1 = lowest).
func (l *League) Zones(level, n int) (promote, demote int) {
	if level < len(l.Tiers) {
		promote = min(l.Promote, n/2)
	}
	if level > 1 {
		demote = min(l.Demote, n/2)
	}
	return promote, demote
}

var tierIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// leagueSpec is a board's league as written.
type leagueSpec struct {
	Cycle      yaml.Node `yaml:"cycle"`
	Tiers      yaml.Node `yaml:"tiers"`
	CohortSize yaml.Node `yaml:"cohort_size"`
	Promote    yaml.Node `yaml:"promote"`
	Demote     yaml.Node `yaml:"demote"`
}

// tierSpec is one tier written as a mapping.
type tierSpec struct {
	ID    yaml.Node `yaml:"id"`
	Title yaml.Node `yaml:"title"`
}

// zoneSpec is one zone as written.
type zoneSpec struct {
	Title yaml.Node `yaml:"title"`
	Top   yaml.Node `yaml:"top"`
}

// stray reports the stray keys of a mapping in field, naming what it has.
func (s *scope) stray(field string, stray []strayKey, has []string) {
	for _, k := range stray {
		if k.first != 0 {
			s.fail(field, k.val, "%s given twice, first on line %d", k.key, k.first)
		} else {
			s.fail(field, k.val, "unknown key %q; it has %s", k.key, andList(has))
		}
	}
}

// league reads a board's league field; nil when it has problems (reported).
func (s *scope) league(n *yaml.Node) *League {
	const field = "league"
	if n.Kind != yaml.MappingNode {
		s.fail(field, n, "must be a mapping with cycle, tiers, cohort_size, promote and demote")
		return nil
	}
	var spec leagueSpec
	s.stray(field, decodeFields(n, &spec, false), specKeys(&spec))
	l := &League{}
	missing := func(name string, v *yaml.Node) bool {
		if v.Kind == 0 {
			s.fail(field, n, "%s is required", name)
			return true
		}
		return false
	}
	if !missing("cycle", &spec.Cycle) {
		var cycle string
		oneOf(s, field+".cycle", &spec.Cycle, &cycle, "hour", "day", "week", "month")
		if cycle != "" {
			l.Cycle, _ = ParseView(cycle)
		}
	}
	if !missing("tiers", &spec.Tiers) {
		l.Tiers = s.tiers(&spec.Tiers)
	}
	l.CohortSize = -1
	if !missing("cohort_size", &spec.CohortSize) {
		s.wholeNumber(field+".cohort_size", &spec.CohortSize, &l.CohortSize, 5, 1000, " (members of a cohort)")
	}
	half := 500
	if l.CohortSize > 0 {
		half = l.CohortSize / 2
	}
	l.Promote, l.Demote = -1, -1
	if !missing("promote", &spec.Promote) {
		s.wholeNumber(field+".promote", &spec.Promote, &l.Promote, 0, half, " (at most half of cohort_size)")
	}
	if !missing("demote", &spec.Demote) {
		s.wholeNumber(field+".demote", &spec.Demote, &l.Demote, 0, half, " (at most half of cohort_size)")
	}
	for f := range s.failed {
		if f == field || strings.HasPrefix(f, field+".") {
			return nil
		}
	}
	return l
}

// tiers reads a league's tiers: 2 to 20 ids or {id, title} mappings.
func (s *scope) tiers(n *yaml.Node) []Tier {
	const field = "league.tiers"
	if n.Kind != yaml.SequenceNode || len(n.Content) < 2 || len(n.Content) > 20 {
		s.fail(field, n, "must be a list of 2 to 20 tiers, lowest first, like [bronze, silver, gold]")
		return nil
	}
	var tiers []Tier
	seen := map[string]bool{}
	for _, tn := range n.Content {
		var t Tier
		switch tn.Kind {
		case yaml.ScalarNode:
			t.ID = tn.Value
		case yaml.MappingNode:
			var spec tierSpec
			s.stray(field, decodeFields(tn, &spec, false), specKeys(&spec))
			if spec.ID.Kind != yaml.ScalarNode {
				s.fail(field, tn, "a tier written as a mapping needs an id")
				continue
			}
			t.ID = spec.ID.Value
			if spec.Title.Kind != 0 {
				if spec.Title.Kind != yaml.ScalarNode || strings.TrimSpace(spec.Title.Value) == "" || len(spec.Title.Value) > 64 {
					s.fail(field, &spec.Title, "tier %q: title must be 1 to 64 characters of text", t.ID)
					continue
				}
				t.Title = spec.Title.Value
			}
		default:
			s.fail(field, tn, "a tier is an id like gold or a mapping {id: gold, title: Gold}")
			continue
		}
		if !tierIDPattern.MatchString(t.ID) {
			s.fail(field, tn, "tier id %q must match [a-z0-9][a-z0-9-]{0,31}", t.ID)
			continue
		}
		if t.ID == "members" {
			// /api/v1/boards/{board}/league/members/{member} is a member's
			// league: a tier of that name could not be addressed.
			s.fail(field, tn, "tier id %q is reserved (league/members/{member} is a member's league); choose another", t.ID)
			continue
		}
		if seen[t.ID] {
			s.fail(field, tn, "tier %q is listed twice", t.ID)
			continue
		}
		seen[t.ID] = true
		if t.Title == "" {
			t.Title = strings.ToUpper(t.ID[:1]) + t.ID[1:]
		}
		tiers = append(tiers, t)
	}
	return tiers
}

// zones reads a board's zones: up to MaxZones {title, top}, top increasing.
func (s *scope) zones(n *yaml.Node) []Zone {
	const field = "zones"
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 || len(n.Content) > MaxZones {
		s.fail(field, n, "must be a list of 1 to %d zones like [{title: Prize, top: 3}]", MaxZones)
		return nil
	}
	var zones []Zone
	for _, zn := range n.Content {
		if zn.Kind != yaml.MappingNode {
			s.fail(field, zn, "a zone is a mapping {title: Prize, top: 3}")
			continue
		}
		var spec zoneSpec
		s.stray(field, decodeFields(zn, &spec, false), specKeys(&spec))
		var z Zone
		if spec.Title.Kind != yaml.ScalarNode || strings.TrimSpace(spec.Title.Value) == "" || len(spec.Title.Value) > 64 {
			s.fail(field, zn, "each zone needs a title of 1 to 64 characters")
			continue
		}
		z.Title = spec.Title.Value
		if spec.Top.Kind == 0 {
			s.fail(field, zn, "zone %q needs top, its last rank (1 to 1000)", z.Title)
			continue
		}
		z.Top = -1
		s.wholeNumber(field, &spec.Top, &z.Top, 1, 1000, fmt.Sprintf(" (zone %q's last rank)", z.Title))
		if z.Top < 0 {
			continue
		}
		if len(zones) > 0 && z.Top <= zones[len(zones)-1].Top {
			s.fail(field, zn, "zone %q ends at rank %d, not below the previous zone's %d: list zones by increasing top", z.Title, z.Top, zones[len(zones)-1].Top)
			continue
		}
		zones = append(zones, z)
	}
	return zones
}
