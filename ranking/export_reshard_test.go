package ranking

// SetReshardPages shrinks reshard's pages (keys per SCAN, entries per
// ZSCAN, HSCAN and XRANGE) so that small boards stop and resume mid-key
// and mid-shard.
func SetReshardPages(tb interface{ Cleanup(func()) }, keys, entries int64) {
	oldKeys, oldEntries := reshardKeysPage, reshardEntriesPage
	reshardKeysPage, reshardEntriesPage = keys, entries
	tb.Cleanup(func() { reshardKeysPage, reshardEntriesPage = oldKeys, oldEntries })
}
