package web

import (
	"net"
	"net/netip"

	"github.com/labstack/echo/v4"
)

// clientIPExtractor says who the client of a request is. By default it is
// the TCP peer: X-Forwarded-For is ignored, since any client could write
// one to dodge a per-client limit. Behind reverse proxies, their networks
// are trusted: the client is the address nearest the end of
// X-Forwarded-For that is not a trusted proxy.
func clientIPExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// clientKey is what per-client limits count by: an IPv4 address, or the
// /64 of an IPv6 one (one subscriber usually holds a whole /64).
func clientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
