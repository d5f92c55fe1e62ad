package ranking

// ShardSegValuesKey is the values index of segment name on shard i of a
// board (tests fill it to reach the cap without writing 10,000 events).
func ShardSegValuesKey(s *Store, boardID string, i int, name string) string {
	b, _ := s.cfg.Board(boardID)
	return s.shardKeys(b, i).segValues(name)
}

// KeptChartPoints is how many final chart points s keeps for rank cards.
func KeptChartPoints(s *Store) int {
	c := s.charts
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range []map[string]*chart{c.cur, c.old} {
		for _, ch := range m {
			n += len(ch.points)
		}
	}
	return n
}
