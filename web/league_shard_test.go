package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// TestLeagueShardedPages: on a sharded board the overview links each
// group by the number the store gives it, "find my league" goes to the
// member's group and that group lists it.
func TestLeagueShardedPages(t *testing.T) {
	lf := mustLeagueFixture(t, strings.Replace(leagueTestBoards, "  - id: lg\n", "  - id: lg\n    shards: 3\n", 1))
	var pairs []string
	for i := range 20 {
		pairs = append(pairs, fmt.Sprintf("p%02d=%d", i, i+1))
	}
	lf.write(t, "lg", pairs...)
	ov, err := lf.store.League(context.Background(), "lg", "")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range ov.Tiers[0].Cohorts {
		want = append(want, fmt.Sprintf("/boards/lg/league/bronze/%d", c.Number))
	}
	var got []string
	MustOK(t, lf.get(t, "/boards/lg/league")).Doc(t).Find(testid(views.TestLeagueTier) + " li a").Each(func(_ int, a *goquery.Selection) {
		got = append(got, strings.SplitN(a.AttrOr("href", ""), "?", 2)[0])
	})
	if strings.Join(got, " ") != strings.Join(want, " ") || len(want) < 4 {
		t.Fatalf("overview links %v, want %v", got, want)
	}
	for i := range 20 {
		m := fmt.Sprintf("p%02d", i)
		st, err := lf.store.LeagueMember(context.Background(), "lg", "", m)
		if err != nil {
			t.Fatal(err)
		}
		r := lf.get(t, "/boards/lg/league?member="+m)
		if loc := fmt.Sprintf("/boards/lg/league/bronze/%d?me=%s", st.Number, m); r.Status != http.StatusSeeOther || r.Header.Get("Location") != loc {
			t.Fatalf("find %s: %d %s, want %s", m, r.Status, r.Header.Get("Location"), loc)
		}
		if self := MustOK(t, lf.get(t, r.Header.Get("Location"))).Doc(t).Find("tr.self"); self.AttrOr("data-member", "") != m {
			t.Fatalf("%s's group does not highlight it", m)
		}
		if ranking.ShardOf(m, 3) != (st.Number-1)%3 {
			t.Fatalf("%s on shard %d is in group %d", m, ranking.ShardOf(m, 3), st.Number)
		}
	}
}
