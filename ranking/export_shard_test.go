package ranking

// ShardPrefix is the key prefix "<prefix>{<tag>}:" of shard i of a board
// (the board's own on a board of one shard).
func (s *Store) ShardPrefix(boardID string, i int) string {
	b, err := s.board(boardID)
	if err != nil {
		panic(err)
	}
	return string(s.shardKeys(b, i))
}

// ShardTag is the hash tag of shard i of board b.
func ShardTag(b *Board, i int) string { return b.tags[i] }
