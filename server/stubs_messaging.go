package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"gateway/gen"
)

// Placeholders until the messaging capability lands; each answers 500 through the renderer.
var errNotBuilt = errors.New("not built yet")

func (a *api) ListTemplates(ctx context.Context, _ gen.ListTemplatesRequestObject) (gen.ListTemplatesResponseObject, error) {
	return nil, errNotBuilt
}

func (a *api) SendTemplateMessage(ctx context.Context, _ gen.SendTemplateMessageRequestObject) (gen.SendTemplateMessageResponseObject, error) {
	return nil, errNotBuilt
}

func (a *api) GetMessage(ctx context.Context, _ gen.GetMessageRequestObject) (gen.GetMessageResponseObject, error) {
	return nil, errNotBuilt
}

func (s *Server) platformVerify(c echo.Context) error  { return echo.NewHTTPError(http.StatusNotFound) }
func (s *Server) platformWebhook(c echo.Context) error { return echo.NewHTTPError(http.StatusNotFound) }
