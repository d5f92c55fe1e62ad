package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// actor applies named actions (POST /api/v1/actions/{action}).
type actor interface {
	Act(ctx context.Context, name string, ev ranking.Event) ([]ranking.ActionResult, error)
}

// actionJSON is the body of an action: an event without a value (each
// board gets the action's own).
type actionJSON struct {
	Member   string             `json:"member"`
	Name     *string            `json:"name"`
	ID       *string            `json:"id"`
	At       *string            `json:"at"`
	Segments *map[string]string `json:"segments"`
}

// handleAction serves POST /api/v1/actions/{action}: the action's value is
// applied to each of its boards; the answer has each board's section 6
// answer or its error, in the boards file's order.
func (s *Server) handleAction(c echo.Context) error {
	var store actor = s.store
	name, err := pathParam(c, "action")
	if err != nil {
		return err
	}
	a, ok := s.cfg.Action(name)
	if !ok {
		return ranking.Errorf(ranking.ENOTFOUND, "no action %q", name)
	}
	var in actionJSON
	if err := decodeJSON(c.Request().Body, &in); err != nil {
		return err
	}
	ev, err := eventFields(eventJSON{Member: in.Member, Name: in.Name, ID: in.ID, At: in.At, Segments: in.Segments})
	if err != nil {
		return err
	}
	if err := s.takeRate(c, len(a.Targets)); err != nil {
		return ranking.NotApplied(err) // the write was never sent
	}
	// The boards are written concurrently, each with a whole StoreTimeout
	// from here: the rate check's time is not taken from them.
	ctx := c.Request().Context()
	if base, ok := c.Get(baseContextKey).(context.Context); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(base, StoreTimeout)
		defer cancel()
	}
	results, err := store.Act(ctx, name, ev)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	head, _ := json.Marshal(struct {
		Action string `json:"action"`
		Member string `json:"member"`
	}{name, ev.Member})
	buf.Write(head[:len(head)-1])
	buf.WriteString(`,"boards":{`)
	applied := 0
	var firstErr error
	for i, r := range results {
		b, _ := s.cfg.Board(r.Board)
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(r.Board)
		buf.Write(key)
		buf.WriteByte(':')
		var item []byte
		if r.Err != nil {
			status, d := s.classify(c, r.Err)
			s.countRefused(b, status, d.Code)
			if firstErr == nil {
				firstErr = r.Err
			}
			item, _ = json.Marshal(struct {
				Error errorDetail `json:"error"`
			}{d})
		} else {
			applied++
			s.reads.Invalidate(b.ID)
			s.countWritten(b, r.Result)
			item, _ = json.Marshal(answerOf(b, r.Result))
		}
		buf.Write(item)
	}
	buf.WriteString("}}\n")
	// Nothing applied anywhere: the first board's error is the answer, so
	// that a client retries an outage (503) as it would a single write.
	if applied == 0 && firstErr != nil && allSameCode(results) {
		return firstErr
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, buf.Bytes())
}

// allSameCode reports whether every result failed with one error code
// and, for writes Redis failed, one outcome.
func allSameCode(rs []ranking.ActionResult) bool {
	for _, r := range rs {
		if r.Err == nil || ranking.ErrorCode(r.Err) != ranking.ErrorCode(rs[0].Err) ||
			ranking.ErrorOutcome(r.Err) != ranking.ErrorOutcome(rs[0].Err) {
			return false
		}
	}
	return true
}
