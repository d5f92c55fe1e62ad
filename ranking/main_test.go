package ranking_test

import (
	"os"
	"testing"

	"github.com/standings/standings/ranking/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
