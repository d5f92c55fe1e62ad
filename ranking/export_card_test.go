package ranking

// ShardSegValuesKey is the values index of segment name on shard i of a
// board (tests fill it to reach the cap without writing 10,000 events).
func ShardSegValuesKey(s *Store, boardID string, i int, name string) string {
	b, _ := s.cfg.Board(boardID)
	return s.shardKeys(b, i).segValues(name)
}
