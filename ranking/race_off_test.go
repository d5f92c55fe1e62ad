//go:build !race

package ranking_test

// raceScale: see race_on_test.go.
const raceScale = 1
