package store

import (
	"fmt"
	"sync"
	"time"

	"github.com/lib/pq"
)

// DeliveriesChannel is the NOTIFY channel a redelivery signals (the fan-out trigger does not:
// store.WakeOnEvents).
const DeliveriesChannel = "webhook_deliveries"

// DeliveryListener wakes dispatchers when deliveries become due: it LISTENs on
// DeliveriesChannel over a dedicated connection (outside the pool) and coalesces the
// notifications into a channel of capacity one. After a reconnect, when notifications may have
// been missed, it wakes too.
type DeliveryListener struct {
	l    *pq.Listener
	c    chan struct{}
	done chan struct{}
	once sync.Once
}

// ListenDeliveries starts listening with the DSN. It does not wait for the connection: it is
// made, and remade after a loss, in the background, and report (which may be nil) hears of
// every failure. It cannot fail.
func ListenDeliveries(dsn string, report func(error)) *DeliveryListener {
	l := &DeliveryListener{c: make(chan struct{}, 1), done: make(chan struct{})}
	l.l = pq.NewListener(dsn, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && report != nil {
			report(fmt.Errorf("webhook listener %s: %w", ev, err))
		}
	})
	go func() {
		// Listen blocks until the connection is up (or Close); polling covers the wait.
		if err := l.l.Listen(DeliveriesChannel); err != nil && report != nil && !l.closed() {
			report(fmt.Errorf("LISTEN %s: %w", DeliveriesChannel, err))
		}
		l.wake() // anything committed before LISTEN took effect
	}()
	go func() {
		for {
			select {
			case <-l.done:
				return
			case _, ok := <-l.l.Notify:
				if !ok {
					return
				}
				// A nil notification follows a reconnect: rescan, like any other wake-up.
				l.wake()
			}
		}
	}()
	return l
}

func (l *DeliveryListener) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *DeliveryListener) wake() {
	select {
	case l.c <- struct{}{}:
	default:
	}
}

// C receives a value when deliveries may have become due.
func (l *DeliveryListener) C() <-chan struct{} { return l.c }

// Close stops listening and closes the connection; it is idempotent and cannot fail.
func (l *DeliveryListener) Close() {
	l.once.Do(func() {
		close(l.done)
		l.l.Close()
	})
}

// ConnectionsChannel is the NOTIFY channel a trigger on connections signals with the phone
// number id of every number connected, moved or disconnected (migration 000009).
const ConnectionsChannel = "connections_changed"

// SendTargetsChannel is the NOTIFY channel triggers on templates and connections signal with
// the account id of every change of an account's templates or number (migration 000029).
const SendTargetsChannel = "send_targets_changed"

// ConnectionListener hears of connected, moved and disconnected numbers and of changed send
// targets: it LISTENs on ConnectionsChannel and SendTargetsChannel over a dedicated connection
// (outside the pool), the shape of DeliveryListener.
type ConnectionListener struct {
	l    *pq.Listener
	done chan struct{}
	once sync.Once
}

// ListenConnections starts listening with the DSN and calls changed (from one goroutine) with
// the channel and payload of every change (ConnectionsChannel and a phone number id, or
// SendTargetsChannel and an account id), and with "", "" — forget everything — once listening
// on both starts and after every reconnect, when changes may have been missed. The connection
// is made, and remade after a loss, in the background; report (which may be nil) hears of every
// failure. It cannot fail.
func ListenConnections(dsn string, changed func(channel, payload string), report func(error)) *ConnectionListener {
	l := &ConnectionListener{done: make(chan struct{})}
	l.l = pq.NewListener(dsn, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && report != nil {
			report(fmt.Errorf("connections listener %s: %w", ev, err))
		}
	})
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		for _, ch := range []string{ConnectionsChannel, SendTargetsChannel} {
			if err := l.l.Listen(ch); err != nil && report != nil && !l.closed() {
				report(fmt.Errorf("LISTEN %s: %w", ch, err))
			}
		}
	}()
	go func() {
		select {
		case <-l.done:
			return
		case <-listening:
			changed("", "") // anything changed before LISTEN took effect
		}
		for {
			select {
			case <-l.done:
				return
			case n, ok := <-l.l.Notify:
				if !ok {
					return
				}
				if n == nil { // a reconnect: notifications may have been missed
					changed("", "")
					continue
				}
				changed(n.Channel, n.Extra)
			}
		}
	}()
	return l
}

func (l *ConnectionListener) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// Close stops listening and closes the connection; it is idempotent and cannot fail.
func (l *ConnectionListener) Close() {
	l.once.Do(func() {
		close(l.done)
		l.l.Close()
	})
}
