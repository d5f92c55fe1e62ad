package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/standings/standings/ranking"
)

// unmatchedRoute is the route label of requests no route matched, so that
// unknown URLs never reach a label (their number is unbounded).
const unmatchedRoute = "unmatched"

// metrics are a Server's Prometheus metrics, on a registry of its own so
// that two Servers in one process (tests) never share counters.
type metrics struct {
	registry      *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	eventsWritten *prometheus.CounterVec
	eventsRefused *prometheus.CounterVec
	redisErrors   prometheus.Counter
	liveViewers   prometheus.Gauge
	liveRenders   prometheus.Counter
	liveDropped   prometheus.Counter
	liveRefused   *prometheus.CounterVec
	feedDropped   prometheus.Counter
	handler       http.Handler // serves the registry
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "standings_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "standings_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
		eventsWritten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "standings_events_written_total",
			Help: "Score events applied (not refused, not duplicates), by board.",
		}, []string{"board"}),
		eventsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "standings_events_refused_total",
			Help: "Score events refused, by board and error code.",
		}, []string{"board", "code"}),
		redisErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "standings_redis_errors_total",
			Help: "Requests that ended in an unavailable or internal error.",
		}),
	}
	m.liveViewers = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "standings_live_viewers",
		Help: "Open live-feed websockets.",
	})
	m.liveRenders = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "standings_live_renders_total",
		Help: "Live fragments rendered (at most one per watched topic per tick).",
	})
	m.liveDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "standings_live_dropped_total",
		Help: "Live viewers dropped (1013) for not taking a frame within the write timeout.",
	})
	m.liveRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "standings_live_refused_total",
		Help: "Live connections refused at a limit, by limit (per_client, total).",
	}, []string{"limit"})
	m.feedDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "standings_feed_dropped_total",
		Help: "Change feed subscriptions dropped because the live feed fell behind (it subscribes again and re-renders every topic).",
	})
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, m.eventsWritten, m.eventsRefused, m.redisErrors,
		m.liveViewers, m.liveRenders, m.liveDropped, m.liveRefused, m.feedDropped,
	)
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}

// observe counts and times every request by its route pattern. It hands
// errors to the error funnel itself, so that the status it records is the
// one the client gets.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		route := c.Path()
		if route == "" || errors.Is(err, echo.ErrNotFound) || errors.Is(err, echo.ErrMethodNotAllowed) {
			route = unmatchedRoute
		}
		method := safeMethod(c.Request().Method)
		status := statusLabel(c.Response().Status)
		s.metrics.requests.WithLabelValues(route, method, status).Inc()
		s.metrics.duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
		return nil
	}
}

// otherLabel stands for any method or status outside the known ones.
const otherLabel = "other"

// safeMethod bounds the method label (and log field): anyone can send any
// token as a method, and each would otherwise make new series.
func safeMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodDelete, http.MethodPatch, http.MethodOptions:
		return m
	}
	return otherLabel
}

// statusLabel bounds the status label to the statuses net/http knows.
func statusLabel(status int) string {
	if http.StatusText(status) == "" {
		return otherLabel
	}
	return strconv.Itoa(status)
}

// handleMetrics serves GET /metrics in the Prometheus text format.
func (s *Server) handleMetrics(c echo.Context) error {
	s.metrics.handler.ServeHTTP(c.Response(), c.Request())
	return nil
}

// countWritten counts the events of results that were applied. The board
// must be one found in the config, which bounds the label.
func (s *Server) countWritten(b *ranking.Board, results ...ranking.WriteResult) {
	n := 0
	for _, r := range results {
		if r.Err == nil && !r.Duplicate {
			n++
		}
	}
	if n > 0 {
		s.metrics.eventsWritten.WithLabelValues(b.ID).Add(float64(n))
	}
}

// countRefused counts an event refused with a 4xx code. Failures of the
// store (unavailable, internal) are not refusals: the redis error counter
// has them.
func (s *Server) countRefused(b *ranking.Board, status int, code string) {
	if status >= 400 && status < 500 {
		s.metrics.eventsRefused.WithLabelValues(b.ID, code).Inc()
	}
}

// backgroundCollector reports, at each scrape, the webhook deliveries in
// Redis by state (shared by every instance), this instance's delivery
// attempts by outcome, and its ingest stream counters.
type backgroundCollector struct {
	hooks   webhookAdmin
	streams *ranking.StreamStats // nil: no stream counters

	deliveries, attempts, stream *prometheus.Desc
}

func newBackgroundCollector(hooks webhookAdmin, streams *ranking.StreamStats) *backgroundCollector {
	return &backgroundCollector{
		hooks: hooks, streams: streams,
		deliveries: prometheus.NewDesc("standings_webhook_deliveries",
			"Webhook deliveries kept in Redis, by state (pending, delivered, failed); the same on every instance.", []string{"state"}, nil),
		attempts: prometheus.NewDesc("standings_webhook_attempts_total",
			"Webhook delivery attempts of this instance, by outcome (delivered, retried, failed, lost).", []string{"outcome"}, nil),
		stream: prometheus.NewDesc("standings_stream_entries_total",
			"Ingest stream entries this instance handled, by outcome (applied, duplicate, dead, claimed).", []string{"outcome"}, nil),
	}
}

func (b *backgroundCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- b.deliveries
	ch <- b.attempts
	ch <- b.stream
}

// scrapeTimeout bounds the Redis reads of one scrape.
const scrapeTimeout = time.Second

func (b *backgroundCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	// Redis unreachable: the gauges are left out of this scrape rather
	// than reported as zero.
	if counts, err := b.hooks.DeliveryCounts(ctx); err == nil {
		for _, st := range []string{ranking.DeliveryPending, ranking.DeliveryDelivered, ranking.DeliveryFailed} {
			ch <- prometheus.MustNewConstMetric(b.deliveries, prometheus.GaugeValue, float64(counts[st]), st)
		}
	}
	ws := b.hooks.WebhookStats()
	for _, o := range []struct {
		name string
		n    int64
	}{{"delivered", ws.Delivered}, {"retried", ws.Retried}, {"failed", ws.Failed}, {"lost", ws.Lost}} {
		ch <- prometheus.MustNewConstMetric(b.attempts, prometheus.CounterValue, float64(o.n), o.name)
	}
	if b.streams != nil {
		for _, o := range []struct {
			name string
			n    int64
		}{{"applied", b.streams.Applied.Load()}, {"duplicate", b.streams.Duplicates.Load()},
			{"dead", b.streams.Dead.Load()}, {"claimed", b.streams.Claimed.Load()}} {
			ch <- prometheus.MustNewConstMetric(b.stream, prometheus.CounterValue, float64(o.n), o.name)
		}
	}
}
