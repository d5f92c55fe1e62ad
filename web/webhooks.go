package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// webhookAdmin lists and retries webhook deliveries (GET
// /api/v1/webhooks/deliveries, POST .../deliveries/{id}/retry) and counts
// them for /metrics.
type webhookAdmin interface {
	Deliveries(ctx context.Context, status string, limit int) ([]ranking.Delivery, error)
	RetryDelivery(ctx context.Context, id string) error
	DeliveryCounts(ctx context.Context) (map[string]int64, error)
	WebhookStats() ranking.WebhookStats
}

// handleDeliveries serves GET /api/v1/webhooks/deliveries?status=&limit=
// (admin): pending ones soonest due first, delivered and failed ones
// newest first.
func (s *Server) handleDeliveries(c echo.Context) error {
	var store webhookAdmin = s.store
	limit, err := intParam(c, "limit", 100, 1, ranking.MaxDeliveriesLimit)
	if err != nil {
		return err
	}
	status := c.QueryParam("status")
	if status == "" {
		return ranking.Errorf(ranking.EINVALID, "status is required: pending, failed or delivered")
	}
	list, err := store.Deliveries(c.Request().Context(), status, limit)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, struct {
		Deliveries []ranking.Delivery `json:"deliveries"`
	}{list})
}

// handleRetryDelivery serves POST /api/v1/webhooks/deliveries/{id}/retry
// (admin): a failed delivery is sent again now.
func (s *Server) handleRetryDelivery(c echo.Context) error {
	var store webhookAdmin = s.store
	id, err := pathParam(c, "id")
	if err != nil {
		return err
	}
	if err := store.RetryDelivery(c.Request().Context(), id); err != nil {
		return err
	}
	return render(c, http.StatusOK, struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}{id, ranking.DeliveryPending})
}
