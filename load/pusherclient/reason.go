package pusherclient

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
)

// Reason maps an error from Trigger or TriggerBatch to a stable counter key;
// see the package comment. "" for nil.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	var he *HTTPError
	var be *BodyError
	var ne net.Error
	switch {
	case errors.As(err, &he):
		return "status_" + strconv.Itoa(he.Status)
	case errors.As(err, &be) && be.Code != 0:
		return "body_code_" + strconv.Itoa(be.Code)
	case errors.As(err, &be):
		return "body_error"
	case errors.Is(err, syscall.ECONNRESET):
		return "ECONNRESET"
	case errors.Is(err, syscall.EPIPE):
		return "EPIPE"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "ECONNREFUSED"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "other"
}
