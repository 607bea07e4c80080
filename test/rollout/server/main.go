// Command server is the HTTP service of the rolling-restart test: an ordinary
// server that knows nothing about readiness. On SIGTERM (or SIGINT) it does
// what most servers do: it closes its listener at once, finishes the
// requests in flight and exits 0. It can be slow to start, like a legacy
// service loading its data, so a restarted instance is not back at once.
//
// Usage: server -listen 127.0.0.1:8080 [-work 20ms] [-startup 1s]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "", "address to serve on (required)")
	work := flag.Duration("work", 20*time.Millisecond, "time each request takes, so requests are in flight when the stop comes")
	startup := flag.Duration("startup", 0, "delay before listening (a slow start)")
	name := flag.String("name", "", "name put in every response")
	flag.Parse()
	if *listen == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: server -listen ADDR [-work D] [-startup D] [-name S]")
		os.Exit(2)
	}
	// Caught before the slow start, so a stop during it is an orderly exit too.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)

	select {
	case <-time.After(*startup):
	case <-stop:
		os.Exit(0)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(*work)
			fmt.Fprintf(w, "ok %s\n", *name)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	select {
	case err := <-served:
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	case <-stop:
	}
	// Shutdown closes the listener first (new connections are refused from
	// here on), then waits for the requests in flight and closes idle
	// connections: the behaviour that loses requests behind a load balancer
	// that has not noticed yet.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "server: shutdown:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
