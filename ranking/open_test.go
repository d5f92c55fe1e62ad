package ranking_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// TestOpen: Open reaches a standalone Redis, a cluster and the embedded
// one; the store writes and reads there, and after Close it answers
// unavailable.
func TestOpen(t *testing.T) {
	cfg := MustConfig(t, "boards: [{id: b, views: [day, all]}]\n")
	for _, tc := range []struct {
		name string
		opts func(t *testing.T) ranking.Options
	}{
		{"embedded", func(t *testing.T) ranking.Options { return ranking.Options{Embedded: true} }},
		{"redis", func(t *testing.T) ranking.Options {
			return ranking.Options{RedisURL: "redis://" + redistest.MustStandalone(t) + "/0?pool_size=3"}
		}},
		{"cluster", func(t *testing.T) ranking.Options {
			return ranking.Options{RedisCluster: strings.Join(redistest.MustCluster(t), ",")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			opts := tc.opts(t)
			opts.Prefix = redistest.Namespace(t) + ":"
			s, err := ranking.Open(ctx, cfg, opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 3}); err != nil {
				t.Fatal(err)
			}
			if pg, err := s.Page(ctx, "b", "all", ranking.PageQuery{Limit: 10}); err != nil || pg.Total != 1 {
				t.Fatalf("page: %+v, %v", pg, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Ping(ctx); ranking.ErrorCode(err) != ranking.EUNAVAILABLE {
				t.Errorf("ping after Close: %v, want unavailable", err)
			}
		})
	}
}

// TestOpenRefuses: Open wants exactly one Redis, a URL go-redis can read,
// and a Redis that answers.
func TestOpenRefuses(t *testing.T) {
	t.Parallel() // waits on timeouts, its own servers or prefix
	cfg := MustConfig(t, "boards: [{id: b}]\n")
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		name string
		opts ranking.Options
		want func(error) bool
	}{
		{"none", ranking.Options{}, func(err error) bool { return err != nil }},
		{"two", ranking.Options{RedisURL: "redis://" + closed, Embedded: true}, func(err error) bool { return err != nil }},
		{"bad url", ranking.Options{RedisURL: "http://localhost"}, func(err error) bool {
			var ue *ranking.RedisURLError
			return errors.As(err, &ue)
		}},
		{"no answer", ranking.Options{RedisURL: "redis://" + closed}, func(err error) bool {
			return err != nil && strings.HasPrefix(err.Error(), "redis: ") && ranking.ErrorCode(err) == ranking.EUNAVAILABLE
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ranking.Open(ctx, cfg, tc.opts)
			if s != nil || !tc.want(err) {
				t.Errorf("got %v, %v", s, err)
			}
		})
	}
}
