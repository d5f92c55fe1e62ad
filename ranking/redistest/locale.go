package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Locale is the locale every redis-server of this package runs under, when
// it is installed. redis-server sets LC_COLLATE from the environment, and
// its Lua compares strings with strcoll, so "Zed" < "alice" is false there
// while byte order says true: tests must see such a server to catch script
// code that orders member ids with Lua's < instead of by bytes.
const Locale = "en_US.UTF-8"

var localeCheck struct {
	once sync.Once
	err  error
}

// LocaleAvailable reports why Locale cannot be used (not generated, or no
// "locale" program to tell), or nil when it is installed.
func LocaleAvailable() error {
	localeCheck.once.Do(func() {
		out, err := exec.Command("locale", "-a").Output()
		if err != nil {
			localeCheck.err = fmt.Errorf("cannot list the installed locales (locale -a): %w", err)
			return
		}
		for _, l := range strings.Fields(string(out)) {
			if normLocale(l) == normLocale(Locale) {
				return
			}
		}
		localeCheck.err = fmt.Errorf("the locale %s is not installed (Debian: run .ci/deps.sh, or apt-get install locales && localedef -i en_US -f UTF-8 %s)", Locale, Locale)
	})
	return localeCheck.err
}

// normLocale folds the spellings of one locale name together: glibc lists
// en_US.UTF-8 as en_US.utf8.
func normLocale(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "-", "")
}

// serverEnv is the environment of a redis-server: this process's, with
// LC_ALL set to Locale when it is installed (otherwise the inherited
// locale, as before; Main refuses that when Redis is required).
func serverEnv() []string {
	env := os.Environ()
	if LocaleAvailable() == nil {
		env = append(env, "LC_ALL="+Locale) // exec keeps the last of duplicate keys
	}
	return env
}
