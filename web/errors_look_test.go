package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestRefusedAddressesInPlainWords: a page address the server refuses
// says what is wrong and what works in words, with no status number in
// the heading and none of the API's precise messages (formats, ranges,
// quoted parameter names); the API keeps its JSON error.
func TestRefusedAddressesInPlainWords(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"ann","value":1}`)
	for _, c := range []struct{ path, heading, message string }{
		{"/boards/points/week?page=0", "We can't show that page", "That page number isn't valid: pages start at 1."},
		{"/boards/points/week?page=x", "We can't show that page", "That page number isn't valid: pages start at 1."},
		{"/boards/points/week?period=yesterday", "We can't show that date", "“yesterday” isn't a date we can read. Use ← Previous and Next → on the board to go back and forth in time."},
		{"/boards/points/week/members/ann?period=2026-11", "We can't show that date", "“2026-11” isn't a date we can read. Use ← Previous and Next → on the board to go back and forth in time."},
		{"/boards/points/week/results?before=soon", "We can't show that date", "“soon” isn't a date we can read. Use ← Previous and Next → on the board to go back and forth in time."},
		{"/embed/points/week?limit=51", "We can't show that many rows", "A widget shows 1 to 50 rows; “51” is outside that."},
		{"/embed/points/week?theme=pink", "We don't know that theme", "The theme can be light, dark or auto; “pink” isn't one of them."},
		{"/boards/points/week/members?member=", "Nothing to search for", "Type a name to find someone on the board."},
		{"/boards/points/week?page=1&page=2", "This address repeats itself", "A setting appears more than once in this address. Open the page from the board again."},
		{"/boards/points/week?segment=country:FR", "We can't narrow the board that way", "This board can't be filtered by “country:FR”. Open the board and choose from its list."},
	} {
		r := f.get(t, c.path)
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d", c.path, r.Status)
			continue
		}
		doc := r.Doc(t)
		if got := strings.TrimSpace(doc.Find(".error h1").Text()); got != c.heading {
			t.Errorf("%s: heading %q", c.path, got)
		}
		if got := strings.TrimSpace(doc.Find(".error > p").First().Text()); got != c.message {
			t.Errorf("%s: message %q", c.path, got)
		}
		body := doc.Find("main").Text()
		for _, dev := range []string{"422", "YYYY", "RFC", "whole number", `"`, "cannot show"} {
			if strings.Contains(strings.ReplaceAll(body, "Error code 422", ""), dev) {
				t.Errorf("%s: developer words %q on the page", c.path, dev)
			}
		}
	}
	if r := f.get(t, "/api/v1/boards/points/week?offset=x"); r.Status != http.StatusUnprocessableEntity || r.ErrorCode(t) != "invalid_argument" {
		t.Errorf("api: %d %s", r.Status, r.Body)
	}
}
