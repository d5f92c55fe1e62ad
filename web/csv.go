package web

import (
	"context"
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// csvChunk is how many rows the export reads from Redis at a time.
const csvChunk = ranking.MaxLimit

// handleCSV serves GET /boards/{board}/{view}.csv?period=: rank, member,
// name and score (and zone, on a board with zones) of the whole period, streamed in chunks so that a board of
// millions never sits in memory. Errors before the first byte get a proper
// status; a failure mid-stream aborts the connection, so a download is
// never silently cut short.
func (s *Server) handleCSV(c echo.Context) error {
	var store rowsReader = s.store
	view := strings.TrimSuffix(c.Param("view"), ".csv")
	b, err := s.board(c)
	if err != nil {
		return err
	}
	if _, ok := b.View(view); !ok {
		return ranking.Errorf(ranking.ENOTFOUND, "board %q has no view %q", b.ID, view)
	}
	seg, err := segmentParam(c, b)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	period := c.QueryParam("period")
	pg, err := store.Page(ctx, b.ID, view, ranking.PageQuery{Segment: seg, Period: period, Limit: csvChunk, NoPrevRanks: true})
	if err != nil {
		return err
	}
	// Later chunks read the same period even if the current one rolls over.
	period = pg.Period.ID
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+b.ID+"-"+view+"-"+strings.ReplaceAll(period, ":", "")+`.csv"`)
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	head := []string{"rank", "member", "name", "score"}
	if len(b.Zones) > 0 {
		head = append(head, "zone")
	}
	if err := w.Write(head); err != nil {
		return nil // the client went away
	}
	offset := 0
	for {
		for _, e := range pg.Entries {
			rec := []string{strconv.FormatInt(e.Rank, 10), csvCell(e.Member), csvCell(e.Name), b.FormatScore(e.Score)}
			if len(b.Zones) > 0 {
				z, _ := b.ZoneOf(e.Rank)
				rec = append(rec, csvCell(z.Title)) // empty outside every zone
			}
			if err := w.Write(rec); err != nil {
				return nil
			}
		}
		w.Flush()
		c.Response().Flush()
		offset += len(pg.Entries)
		if len(pg.Entries) < csvChunk || int64(offset) >= pg.Total {
			return nil
		}
		// The request's deadline covers one read; a long export gets a
		// fresh one per chunk, bounded by the client staying connected.
		pg, err = s.readChunk(c, store, b.ID, view, seg, period, offset, pg.Next)
		if err != nil {
			s.logger.Warn("csv export aborted", "board", b.ID, "view", view, "period", period, "rows", offset, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
}

// csvCell defuses spreadsheet formulas: a cell that begins with =, +, -, @,
// tab or CR gets a leading apostrophe.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// readChunk reads the next slice of an export, from the end of the one
// before (after), with a deadline of its own, and gives the connection
// time to send it.
func (s *Server) readChunk(c echo.Context, store rowsReader, board, view string, seg ranking.Segment, period string, offset int, after *ranking.Cursor) (*ranking.Page, error) {
	base, ok := c.Get(baseContextKey).(context.Context)
	if !ok {
		base = c.Request().Context()
	}
	ctx, cancel := context.WithTimeout(base, StoreTimeout)
	defer cancel()
	_ = http.NewResponseController(c.Response()).SetWriteDeadline(time.Now().Add(csvWriteTimeout))
	return store.Page(ctx, board, view, ranking.PageQuery{Segment: seg, Period: period, Offset: offset, Limit: csvChunk, NoPrevRanks: true, After: after})
}

// csvWriteTimeout is how long the client has to take each chunk.
const csvWriteTimeout = 30 * time.Second
