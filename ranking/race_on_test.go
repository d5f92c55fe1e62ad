//go:build race

package ranking_test

// raceScale divides the random workloads' sizes under the race detector,
// which runs them several times slower; the plain runs keep them whole.
const raceScale = 4
