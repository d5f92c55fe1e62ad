package web

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"golang.org/x/sync/semaphore"
)

// Store is what the handlers need of the score store; *ranking.Store
// satisfies it. Each handler names the narrower interface it consumes.
type Store interface {
	scoreWriter
	pageReader
	segmentPageReader
	memberReader
	memberRemover
	pinger
	cardReader
	scoredReader
	resultsReader
	webhookAdmin
	actor
	segmentLister
	segmentChooser
	movesReader
	rowsReader
	memberSearcher
	leagueReader
}

// scoreWriter applies score events (POST .../scores and .../scores/batch).
type scoreWriter interface {
	Write(ctx context.Context, boardID string, ev ranking.Event) (ranking.WriteResult, error)
	Apply(ctx context.Context, boardID string, events []ranking.Event, opts ranking.ApplyOptions) ([]ranking.WriteResult, error)
}

// pageReader reads a slice of a view's period of the board or of one of
// its segment boards (pages, embeds, the live feed).
type pageReader interface {
	Page(ctx context.Context, boardID, viewName string, q ranking.PageQuery) (*ranking.Page, error)
}

// segmentPageReader reads a slice of a view's period of the board or of
// one of its segment boards (the list API and CSV).
type segmentPageReader interface {
	Page(ctx context.Context, boardID, viewName string, q ranking.PageQuery) (*ranking.Page, error)
	Members(ctx context.Context, boardID, viewName string, members []string, q ranking.MembersQuery) (*ranking.Page, error)
}

// rowsReader reads a slice of a period without previous ranks (CSV
// exports, which show no movement: PageQuery.NoPrevRanks).
type rowsReader interface {
	Page(ctx context.Context, boardID, viewName string, q ranking.PageQuery) (*ranking.Page, error)
}

// memberReader reads a member's card (GET .../{view}/members/{member}).
type memberReader interface {
	Member(ctx context.Context, boardID, viewName, member string, q ranking.MemberQuery) (*ranking.Card, error)
}

// segmentLister lists a segment name's values (GET .../segments/{name}).
type segmentLister interface {
	SegmentValues(ctx context.Context, boardID, name string) ([]string, error)
}

// segmentChooser reads the first values of each segment name (the board
// page's segment picker).
type segmentChooser interface {
	SegmentChoices(ctx context.Context, boardID string, n int) ([][]string, error)
}

// memberRemover removes a member from a board (DELETE .../members/{member}).
type memberRemover interface {
	RemoveMember(ctx context.Context, boardID, member string) (bool, error)
}

// scoredReader tells which of many members have a score now (the live
// feed's shared "not ranked" topic).
type scoredReader interface {
	Scored(ctx context.Context, boardID, viewName string, seg ranking.Segment, members []string) ([]bool, error)
}

// pinger checks that the store's Redis answers (GET /readyz).
type pinger interface {
	Ping(ctx context.Context) error
}

// Options are the dependencies of a Server.
type Options struct {
	Store     Store
	Config    *ranking.Config
	WriteKeys []string // may write scores
	AdminKeys []string // may write scores and administer
	Logger    *slog.Logger
	// NotDurable says the store is the embedded, in-memory Redis; every
	// page says so in its footer.
	NotDurable bool
	// PageTick is how long a read of a current period is shared between
	// page requests (0: DefaultPageTick; negative: never shared).
	PageTick time.Duration
	// LiveTick is the live feed's tick: each (board, view, limit) with
	// viewers is rendered at most once per tick (0: DefaultLiveTick).
	LiveTick time.Duration
	// LiveRefresh is how often every watched topic re-renders whatever the
	// feed said (0: DefaultLiveRefresh). Tests lengthen it so that a render
	// follows only the changes they make.
	LiveRefresh time.Duration
	// LiveWriteTimeout is how long a viewer has to take one frame before it
	// is dropped with 1013 (0: DefaultWriteTimeout).
	LiveWriteTimeout time.Duration
	// LivePingInterval is how often idle connections are pinged (0:
	// DefaultPingInterval).
	LivePingInterval time.Duration
	// LiveWholeFrames sends every live frame whole, as before diff frames:
	// the benchmark's baseline.
	LiveWholeFrames bool
	// Feed is the change feed the live feed follows (required; the
	// *ranking.Store is one). NewServer panics without it, rather than
	// serve live pages that never update.
	Feed Feed
	// LiveMaxRenders bounds the live topic renders of one tick (0:
	// DefaultLiveMaxRenders): half go to the most watched topics, the
	// rest to those dirty the longest.
	LiveMaxRenders int
	// LiveMaxConns bounds the open live connections (0:
	// DefaultLiveMaxConns); LiveMaxPerClient those of one client address
	// (0: DefaultLiveMaxPerClient). Over either, a connection is closed
	// at once with 1013 and a reason.
	LiveMaxConns     int
	LiveMaxPerClient int
	// TrustedProxies are the networks of reverse proxies whose
	// X-Forwarded-For names the client; empty: the client is the TCP peer,
	// and the header is ignored (anyone could forge it).
	TrustedProxies []*net.IPNet
	// StreamStats, when set, are the ingest stream consumers' counters,
	// served on /metrics.
	StreamStats *ranking.StreamStats
	// BodyTimeout is how long a client has to send a request body (0:
	// DefaultBodyTimeout).
	BodyTimeout time.Duration
	// BodyMemory bounds the request body bytes held at once by all
	// requests together (0: DefaultBodyMemory; at least MaxBody). A body
	// that cannot get its share within a second is refused with 429.
	BodyMemory int64
	// WriteRate is the score events per second each API key may write,
	// with bursts of twice that, across every instance sharing the Redis
	// (0: DefaultWriteRate; negative: no limit). It is enforced when the
	// Store can keep the budget (it implements TakeRate, as
	// *ranking.Store does).
	WriteRate int
}

// DefaultPageTick is how long page reads of a current period are shared.
const DefaultPageTick = 250 * time.Millisecond

// Server serves the pages, the JSON API and the operational endpoints.
type Server struct {
	echo      *echo.Echo
	store     Store
	cfg       *ranking.Config
	writeKeys [][sha256.Size]byte
	adminKeys [][sha256.Size]byte
	logger    *slog.Logger
	metrics   *metrics

	notDurable bool
	reads      *pageCache   // current-period reads shared per tick
	answers    *answerCache // current-period pages shared per tick
	// latest holds the index's latest results, shared per tick.
	latest *latestResults
	// previews draws and keeps preview images (og:image).
	previews *previewCache

	hub          *hub
	writeTimeout time.Duration
	pingInterval time.Duration

	bodyTimeout time.Duration
	bodyMemory  *semaphore.Weighted // bytes of request bodies held
	bodyRoutes  map[string]bool     // "METHOD /path" of the routes that take a body
	writeRate   int                 // events per second per API key; 0: no limit
	limiter     rateLimiter         // nil: no limit
	errLog      *logLimiter         // bounds the rate of logged request failures
}

// NewServer builds a Server and registers its routes. It panics when
// opts.Feed is nil: that is a wiring mistake, not a condition to serve in.
func NewServer(opts Options) *Server {
	if opts.Feed == nil {
		panic("web: Options.Feed is required (pass the *ranking.Store)")
	}
	s := &Server{
		echo:      echo.New(),
		store:     opts.Store,
		cfg:       opts.Config,
		writeKeys: hashKeys(opts.WriteKeys),
		adminKeys: hashKeys(opts.AdminKeys),
		logger:    opts.Logger,
		metrics:   newMetrics(),

		notDurable: opts.NotDurable,
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if opts.Store != nil {
		s.metrics.registry.MustRegister(newBackgroundCollector(opts.Store, opts.StreamStats))
	}
	s.errLog = newLogLimiter(s.logger, errLogBurst, errLogEvery)
	s.bodyTimeout = orDefault(opts.BodyTimeout, DefaultBodyTimeout)
	s.bodyMemory = semaphore.NewWeighted(max(orDefaultInt64(opts.BodyMemory, DefaultBodyMemory), MaxBody))
	s.writeRate = opts.WriteRate
	if s.writeRate == 0 {
		s.writeRate = DefaultWriteRate
	}
	if l, ok := opts.Store.(rateLimiter); ok && s.writeRate > 0 {
		s.limiter = l
	}
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = s.handleError
	s.routes()
	tick := opts.PageTick
	if tick == 0 {
		tick = DefaultPageTick
	}
	s.reads = newPageCache(opts.Store, tick)
	s.answers = newAnswerCache(tick, s.reads.generation)
	s.latest = newLatestResults(opts.Store, tick)
	s.previews = newPreviewCache()
	s.writeTimeout = orDefault(opts.LiveWriteTimeout, DefaultWriteTimeout)
	s.pingInterval = orDefault(opts.LivePingInterval, DefaultPingInterval)
	s.echo.IPExtractor = clientIPExtractor(opts.TrustedProxies)
	s.hub = newHub(s.renderLive, opts.Store.Scored, opts.Feed, hubLimits{
		tick:         orDefault(opts.LiveTick, DefaultLiveTick),
		refresh:      orDefault(opts.LiveRefresh, DefaultLiveRefresh),
		maxRenders:   orDefaultInt(opts.LiveMaxRenders, DefaultLiveMaxRenders),
		maxConns:     orDefaultInt(opts.LiveMaxConns, DefaultLiveMaxConns),
		maxPerClient: orDefaultInt(opts.LiveMaxPerClient, DefaultLiveMaxPerClient),
	}, s.logger, s.metrics)
	s.hub.wholeOnly = opts.LiveWholeFrames
	s.hub.start()
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func orDefaultInt64(n, def int64) int64 {
	if n <= 0 {
		return def
	}
	return n
}

func orDefaultInt(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// Close ends the live feed: every websocket is closed with 1012 (service
// restart), and Close returns when they are. Call it before shutting the
// HTTP server down, which does not track websockets.
func (s *Server) Close() { s.hub.close() }

// Handler returns the HTTP handler serving every route.
func (s *Server) Handler() http.Handler { return s.echo }

// hashKeys keeps only the SHA-256 of each non-empty key, so that comparing
// a presented key takes the same time whatever the lengths involved.
func hashKeys(keys []string) [][sha256.Size]byte {
	var out [][sha256.Size]byte
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, sha256.Sum256([]byte(k)))
		}
	}
	return out
}
