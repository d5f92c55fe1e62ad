package ranking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// What a board's data was written with, and who serves it: start-up
// checks the boards file's `shards` against the record, and reshard
// (reshard.go) refuses to move a board that an instance serves.

// ServingTTL is how long an instance's word that it serves a board holds;
// a running instance repeats it every ServingTTL/3.
const ServingTTL = 30 * time.Second

// ShardsMismatchError is a boards file whose `shards` for a board differs
// from the count the board's data in Redis was written with.
type ShardsMismatchError struct {
	Board      string
	Configured int // the boards file's
	Recorded   int // the data's
	UnderWayTo int // > 0: a reshard to this count is under way
}

func (e *ShardsMismatchError) Error() string {
	if e.UnderWayTo > 0 {
		return fmt.Sprintf("board %q: a reshard from %d to %d shards is under way; finish it with `standings reshard --config FILE --board %s --shards %d` before serving the board",
			e.Board, e.Recorded, e.UnderWayTo, e.Board, e.UnderWayTo)
	}
	return fmt.Sprintf("board %q: the boards file says shards: %d, but its data in Redis is written with %d shards; set shards: %d, or move the data with `standings reshard --config FILE --board %s --shards %d` while no instance serves the board",
		e.Board, e.Configured, e.Recorded, e.Recorded, e.Board, e.Configured)
}

// RecordedShards returns the shard count board's data is written with:
// its record; with no record, 1 when the board's own tag holds data (a
// board written before sharding existed), else 0 (no data, no record).
func (s *Store) RecordedShards(ctx context.Context, boardID string) (int, error) {
	k := s.keysOfID(boardID)
	v, err := s.rdb.HGet(ctx, k.metaRecord(), "shards").Result()
	switch {
	case err == nil:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxShards {
			return 0, Errorf(EINTERNAL, "board %q: shard count record %q is not a count", boardID, v)
		}
		return n, nil
	case !errors.Is(err, redis.Nil):
		return 0, wrapRedis(err)
	}
	// Every write registers its period keys in the registry k.
	n, err := s.rdb.Exists(ctx, k.registry()).Result()
	if err != nil {
		return 0, wrapRedis(err)
	}
	if n > 0 {
		return 1, nil
	}
	return 0, nil
}

// CheckShards compares every board's `shards` with its data's, recording
// the count for boards that have none yet. It refuses (a
// *ShardsMismatchError naming the board) a board whose data differs or
// whose reshard is under way. Instances run it at start-up, after
// Announce, so that a reshard that starts later sees them.
func (s *Store) CheckShards(ctx context.Context) error {
	var errs []error
	for _, b := range s.cfg.Boards {
		k := s.keysOf(b)
		to, err := s.rdb.HGet(ctx, k.reshardProgress(), "to").Int()
		if err != nil && !errors.Is(err, redis.Nil) {
			return wrapRedis(err)
		}
		rec, err := s.RecordedShards(ctx, b.ID)
		if err != nil {
			return err
		}
		switch {
		case to > 0:
			errs = append(errs, &ShardsMismatchError{Board: b.ID, Configured: b.Shards, Recorded: rec, UnderWayTo: to})
		case rec == b.Shards:
			// A board written before sharding existed gets its record
			// (HSETNX: a recorded one stays).
			if err := s.rdb.HSetNX(ctx, k.metaRecord(), "shards", b.Shards).Err(); err != nil {
				return wrapRedis(err)
			}
		case rec == 0:
			// The first instance on a board records its count; one starting
			// at the same time with another count then finds that.
			set, err := s.rdb.HSetNX(ctx, k.metaRecord(), "shards", b.Shards).Result()
			if err != nil {
				return wrapRedis(err)
			}
			if !set {
				if rec, err = s.RecordedShards(ctx, b.ID); err != nil {
					return err
				}
				if rec != b.Shards {
					errs = append(errs, &ShardsMismatchError{Board: b.ID, Configured: b.Shards, Recorded: rec})
				}
			}
		default:
			errs = append(errs, &ShardsMismatchError{Board: b.ID, Configured: b.Shards, Recorded: rec})
		}
	}
	return errors.Join(errs...)
}

// EncodingMismatchError is a boards file that would read a board's stored
// scores in one of its views with another encoding than they were written
// with: min_score, max_score, decimals, order, ties or the timezone (the
// longest period, hence the tie span) changed.
type EncodingMismatchError struct {
	Board      string
	View       string // the view's name; "~d" the day totals, "~lg" the league rounds
	Recorded   string // the data's encoding, as encodingText renders it
	Configured string // the boards file's
}

func (e *EncodingMismatchError) Error() string {
	what := fmt.Sprintf("view %q", e.View)
	switch e.View {
	case dayTotals.Name:
		what = "the day totals of its rolling views"
	case leagueViewName:
		what = "its league rounds"
	}
	return fmt.Sprintf("board %q: the scores of %s in Redis are encoded as %s, but the boards file gives %s, which would read every stored score wrongly; restore the board's min_score, max_score, decimals, order, ties and timezone, or give it a new id",
		e.Board, what, e.Recorded, e.Configured)
}

// encodingText renders how a codec of b stores scores: the value range,
// decimals and order that give a code's rank value, and the tie unit and
// span that split it.
func (b *Board) encodingText(cd codec) string {
	ties := "ties shared"
	if b.Ties != TiesShared {
		ties = fmt.Sprintf("ties by %s in spans of %d", cd.unit.name, cd.span)
	}
	return fmt.Sprintf("scores %s to %s with %d decimals, %s, %s",
		formatScaled(cd.lo, b.Decimals), formatScaled(cd.hi, b.Decimals), b.Decimals, b.Order, ties)
}

// CheckEncoding compares how each board's settings encode the scores of
// each of its views with the record of how its data was written (field
// enc:<view> of the board's meta hash), recording what has no record yet
// (a new board or view, or data written before the record). It refuses,
// with an *EncodingMismatchError per view and recording nothing, a board
// whose stored codes its settings would read differently. Instances run
// it at start-up.
func (s *Store) CheckEncoding(ctx context.Context) error {
	type field struct {
		b          *Board
		key, field string
		view, want string
	}
	var errs []error
	var missing []field
	for _, b := range s.cfg.Boards {
		key := s.keysOf(b).metaRecord()
		names := make([]string, 0, len(b.codecs))
		for name := range b.codecs {
			names = append(names, name)
		}
		slices.Sort(names)
		fields := make([]string, len(names))
		for i, name := range names {
			fields[i] = "enc:" + name
		}
		got, err := s.rdb.HMGet(ctx, key, fields...).Result()
		if err != nil {
			return wrapRedis(err)
		}
		for i, name := range names {
			want := b.encodingText(b.codecs[name])
			switch rec, ok := got[i].(string); {
			case !ok:
				missing = append(missing, field{b, key, fields[i], name, want})
			case rec != want:
				errs = append(errs, &EncodingMismatchError{Board: b.ID, View: name, Recorded: rec, Configured: want})
			}
		}
	}
	if len(errs) > 0 {
		// Refused, it records nothing.
		return errors.Join(errs...)
	}
	for _, f := range missing {
		// The first instance records it; one starting at the same time
		// with other settings then finds that.
		set, err := s.rdb.HSetNX(ctx, f.key, f.field, f.want).Result()
		if err != nil {
			return wrapRedis(err)
		}
		if set {
			continue
		}
		rec, err := s.rdb.HGet(ctx, f.key, f.field).Result()
		if err != nil {
			return wrapRedis(err)
		}
		if rec != f.want {
			errs = append(errs, &EncodingMismatchError{Board: f.b.ID, View: f.view, Recorded: rec, Configured: f.want})
		}
	}
	return errors.Join(errs...)
}

// Announce says that instance serves every board of the config until
// ServingTTL from now, and drops others' words that have run out.
func (s *Store) Announce(ctx context.Context, instance string) error {
	now, err := s.Now(ctx)
	if err != nil {
		return err
	}
	until := now.Add(ServingTTL).UnixMilli()
	for _, b := range s.cfg.Boards {
		key := s.keysOf(b).serving()
		if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, key, redis.Z{Score: float64(until), Member: instance})
			p.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(now.UnixMilli(), 10))
			return nil
		}); err != nil {
			return wrapRedis(err)
		}
	}
	return nil
}

// Withdraw takes back instance's word that it serves the config's boards.
func (s *Store) Withdraw(ctx context.Context, instance string) error {
	for _, b := range s.cfg.Boards {
		if err := s.rdb.ZRem(ctx, s.keysOf(b).serving(), instance).Err(); err != nil {
			return wrapRedis(err)
		}
	}
	return nil
}

// RunAnnounce repeats Announce every ServingTTL/3 until ctx is done, then
// withdraws (so that a reshard may follow a clean stop at once).
func (s *Store) RunAnnounce(ctx context.Context, instance string, onError func(error)) {
	t := time.NewTicker(ServingTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if err := s.Withdraw(wctx, instance); err != nil {
				onError(err)
			}
			cancel()
			return
		case <-t.C:
			if err := s.Announce(ctx, instance); err != nil && ctx.Err() == nil {
				onError(err)
			}
		}
	}
}

// Server is an instance that said it serves a board.
type Server struct {
	Instance string
	Until    time.Time
}

// Servers lists the instances whose word that they serve board still holds.
func (s *Store) Servers(ctx context.Context, boardID string) ([]Server, error) {
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	zs, err := s.rdb.ZRangeByScoreWithScores(ctx, s.keysOfID(boardID).serving(), &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(now.UnixMilli(), 10), Max: "+inf"}).Result()
	if err != nil {
		return nil, wrapRedis(err)
	}
	out := make([]Server, len(zs))
	for i, z := range zs {
		out[i] = Server{Instance: fmt.Sprint(z.Member), Until: time.UnixMilli(int64(z.Score))}
	}
	return out, nil
}
