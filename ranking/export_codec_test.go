package ranking

// Hooks for the external codec tests.
var (
	Encode = (*Board).encode
	Span   = (*Board).span
	Decode = (*Board).decode
)
