package web

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// eventJSON is one score event as the API takes it. value stays raw so
// that a JSON string is refused (a json.Number would take "12") and the
// number's exact text reaches Board.ParseScore.
type eventJSON struct {
	Member string          `json:"member"`
	Value  json.RawMessage `json:"value"`
	Name   *string         `json:"name"` // pointers: "" given is refused, absent is not
	ID     *string         `json:"id"`
	At     *string         `json:"at"`
	// Segments tags the event: {"country": "FR"} (boards with segments).
	Segments *map[string]string `json:"segments"`
}

// batchJSON is the body of a batch write. Ranks stays raw so that only
// true and false are taken (a type error would otherwise be a 400).
type batchJSON struct {
	Events *[]json.RawMessage `json:"events"`
	Ranks  json.RawMessage    `json:"ranks"`
}

// wantRanks reads the batch's "ranks" option: absent or true answers
// ranks, false leaves them out.
func (in batchJSON) wantRanks() (bool, error) {
	switch string(bytes.TrimSpace(in.Ranks)) {
	case "", "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, ranking.Errorf(ranking.EINVALID, "ranks must be true or false, got %s", bytes.TrimSpace(in.Ranks))
}

// writeAnswer is the 200 answer to one event.
type writeAnswer struct {
	Board     string     `json:"board"`
	Member    string     `json:"member"`
	Duplicate bool       `json:"duplicate"`
	Views     viewScores `json:"views"`
}

// viewScores renders a member's standing per view as a JSON object whose
// keys keep the board's view order.
type viewScores struct {
	board   *ranking.Board
	views   []ranking.ViewScore
	noRanks bool // a batch written with "ranks": false: no rank key at all
}

// MarshalJSON writes {"<view>": {"period", "score", "rank"}, ...} in order,
// scores as exact numbers and rank null when the member is not ranked
// (left out when ranks were not asked for).
func (v viewScores) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, vs := range v.views {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(vs.View)
		period, _ := json.Marshal(vs.Period)
		buf.Write(key)
		buf.WriteString(`:{"period":`)
		buf.Write(period)
		buf.WriteString(`,"score":`)
		buf.WriteString(v.board.FormatScore(vs.Score))
		if v.noRanks {
			buf.WriteByte('}')
			continue
		}
		buf.WriteString(`,"rank":`)
		if vs.Rank > 0 {
			buf.WriteString(strconv.FormatInt(vs.Rank, 10))
		} else {
			buf.WriteString("null")
		}
		buf.WriteByte('}')
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func answerOf(b *ranking.Board, r ranking.WriteResult) writeAnswer {
	return writeAnswer{Board: b.ID, Member: r.Member, Duplicate: r.Duplicate, Views: viewScores{board: b, views: r.Views}}
}

// handleWriteScore serves POST /api/v1/boards/{board}/scores.
func (s *Server) handleWriteScore(c echo.Context) error {
	var store scoreWriter = s.store
	b, err := s.board(c)
	if err != nil {
		return err
	}
	res, err := s.writeOne(c, store, b)
	if err != nil {
		status, d := errorOf(err)
		s.countRefused(b, status, d.Code)
		return err
	}
	s.reads.Invalidate(b.ID)
	s.countWritten(b, res)
	return render(c, 200, answerOf(b, res))
}

// writeOne decodes, checks and writes the event of a single write.
func (s *Server) writeOne(c echo.Context, store scoreWriter, b *ranking.Board) (ranking.WriteResult, error) {
	var in eventJSON
	if err := decodeJSON(c.Request().Body, &in); err != nil {
		return ranking.WriteResult{}, err
	}
	ev, err := parseEvent(b, in)
	if err != nil {
		return ranking.WriteResult{}, err
	}
	if err := s.takeRate(c, 1); err != nil {
		return ranking.WriteResult{}, ranking.NotApplied(err) // the write was never sent
	}
	return store.Write(c.Request().Context(), b.ID, ev)
}

// batchResult is one entry of a batch answer: the answer or the error.
type batchResult struct {
	*writeAnswer
	Error *errorDetail `json:"error,omitempty"`
}

// handleWriteBatch serves POST /api/v1/boards/{board}/scores/batch.
func (s *Server) handleWriteBatch(c echo.Context) error {
	var store scoreWriter = s.store
	b, err := s.board(c)
	if err != nil {
		return err
	}
	var in batchJSON
	if err := decodeJSON(c.Request().Body, &in); err != nil {
		return err
	}
	if in.Events == nil {
		return ranking.Errorf(ranking.EINVALID, "events is required")
	}
	ranks, err := in.wantRanks()
	if err != nil {
		return err
	}
	raws := *in.Events
	if len(raws) > ranking.MaxBatch {
		return ranking.Errorf(ranking.EINVALID, "a batch holds at most %d events, got %d", ranking.MaxBatch, len(raws))
	}
	results := make([]batchResult, len(raws))
	events := make([]ranking.Event, 0, len(raws))
	sent := make([]int, 0, len(raws)) // index in raws of each event sent
	for i, raw := range raws {
		var ej eventJSON
		err := decodeJSON(bytes.NewReader(raw), &ej)
		var ev ranking.Event
		if err == nil {
			ev, err = parseEvent(b, ej)
		}
		if err != nil {
			status, d := s.classify(c, err)
			s.countRefused(b, status, d.Code)
			results[i].Error = &d
			continue
		}
		events = append(events, ev)
		sent = append(sent, i)
	}
	if len(events) > 0 {
		// The batch costs one per event sent; over the budget, none is.
		if err := s.takeRate(c, len(events)); err != nil {
			return ranking.NotApplied(err) // the write was never sent
		}
		res, err := store.Apply(c.Request().Context(), b.ID, events, ranking.ApplyOptions{NoRanks: !ranks})
		s.reads.Invalidate(b.ID) // also when it failed midway: earlier calls may stand
		if err != nil {
			return err
		}
		s.countWritten(b, res...)
		for j, r := range res {
			i := sent[j]
			if r.Err != nil {
				status, d := s.classify(c, r.Err)
				s.countRefused(b, status, d.Code)
				results[i].Error = &d
				continue
			}
			a := answerOf(b, r)
			a.Views.noRanks = !ranks
			results[i].writeAnswer = &a
		}
	}
	return render(c, 200, struct {
		Results []batchResult `json:"results"`
	}{results})
}

// parseEvent turns a decoded event into a ranking.Event. The value must be
// a JSON number, parsed exactly from its text; the store checks the rest
// (member and name rules, bounds, lateness).
func parseEvent(b *ranking.Board, in eventJSON) (ranking.Event, error) {
	if in.Member == "" {
		return ranking.Event{}, ranking.Errorf(ranking.EINVALID, "member is required")
	}
	raw := bytes.TrimSpace(in.Value)
	if len(raw) == 0 || string(raw) == "null" {
		return ranking.Event{}, ranking.Errorf(ranking.EINVALID, "value is required")
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return ranking.Event{}, malformed("field \"value\" must be a JSON number")
	}
	v, err := b.ParseScore(string(raw))
	if err != nil {
		return ranking.Event{}, err
	}
	ev, err := eventFields(in)
	if err != nil {
		return ranking.Event{}, err
	}
	ev.Value = v
	return ev, nil
}

// eventFields checks and converts an event's member, name, id and at.
func eventFields(in eventJSON) (ranking.Event, error) {
	if in.Member == "" {
		return ranking.Event{}, ranking.Errorf(ranking.EINVALID, "member is required")
	}
	ev := ranking.Event{Member: in.Member}
	if in.Segments != nil {
		ev.Segments = *in.Segments
	}
	if in.Name != nil {
		if err := ranking.ValidateName(*in.Name); err != nil {
			return ranking.Event{}, err
		}
		ev.Name = *in.Name
	}
	if in.ID != nil {
		if err := ranking.ValidateEventID(*in.ID); err != nil {
			return ranking.Event{}, err
		}
		ev.ID = *in.ID
	}
	if in.At != nil {
		at, err := ranking.ParseInstant(*in.At)
		if err != nil {
			return ranking.Event{}, ranking.Errorf(ranking.EINVALID, "at %q is not an RFC 3339 instant", *in.At)
		}
		if at.IsZero() {
			// The zero instant means "no at" to ranking.Event; given
			// explicitly it is just far outside any lateness window.
			return ranking.Event{}, ranking.Errorf(ranking.EINVALID, "at %s is outside the accepted range [now - lateness, now + 5s]", at.Format(time.RFC3339))
		}
		ev.At = at
	}
	return ev, nil
}

// board looks up the board named in the path.
func (s *Server) board(c echo.Context) (*ranking.Board, error) {
	id, err := pathParam(c, "board")
	if err != nil {
		return nil, err
	}
	b, ok := s.cfg.Board(id)
	if !ok {
		return nil, ranking.Errorf(ranking.ENOTFOUND, "no board %q", id)
	}
	return b, nil
}
