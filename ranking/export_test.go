package ranking

// Exports of unexported functions for the external tests.
var (
	MaxPeriodLength = (*Calendar).maxPeriodLength
	ParseScaled     = parseScaled
	FormatScaled    = formatScaled
)

// MaxScaled is the bound every scaled value stays below (2^53).
const MaxScaled = maxScaled
