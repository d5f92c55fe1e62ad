package web

import (
	"strings"
	"testing"
)

// TestDecodeJSONStrict: the checks of decodeJSON on their own, embedded
// structs included.
func TestDecodeJSONStrict(t *testing.T) {
	type inner struct {
		A string `json:"a"`
	}
	type outer struct {
		inner
		B string `json:"b"`
		C string
	}
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"a":"x","b":"y","C":"z"}`, true},
		{`{"A":"x"}`, false},
		{`{"c":"x"}`, false},
		{`{"a":"x","a":"y"}`, false},
		{`{"b":"\ud83d\ude00"}`, true},
		{`{"b":"\ud83d"}`, false},
		{`{"b":"\\ud800"}`, true}, // an escaped backslash, then text
		{`{"b":"\"\udfff"}`, false},
		{`{"b":[{"k":1},{"k":2}]}`, false},  // b is a string
		{"{\"b\":\"\xed\xa0\x80\"}", false}, // a surrogate encoded in UTF-8
	} {
		var v outer
		err := decodeJSON(strings.NewReader(tc.body), &v)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.body, err, tc.ok)
		}
	}
}
