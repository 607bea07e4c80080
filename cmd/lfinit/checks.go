package main

import (
	"fmt"
	"os"

	"github.com/light-fabric/lfinit/cmd/lfinit/internal/push"
	"github.com/light-fabric/lfinit/ident"
	"github.com/light-fabric/lfinit/internal/netaddr"
	"github.com/light-fabric/lfinit/readiness"
)

// checkedValue is a string option whose value is checked as it is set, so
// that a value that can never work is refused at start by a message that
// names the flag or the LFINIT_* variable it came from.
type checkedValue struct {
	stringValue
	check func(string) error
}

func (v checkedValue) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	return v.stringValue.Set(s)
}

// orOff lets through the empty value, which turns the option off, and
// checks any other.
func orOff(check func(string) error) func(string) error {
	return func(s string) error {
		if s == "" {
			return nil
		}
		return check(s)
	}
}

var (
	checkReadyTCP  = orOff(readiness.ParseReadyTCP)
	checkReadyHTTP = orOff(readiness.ParseReadyHTTP)
	checkMetrics   = orOff(checkListenAddr)
	checkGateway   = orOff(checkPushGateway)
	checkPidfile   = orOff(checkPidfilePath)
	checkUser      = orOff(checkUserSpec)
)

// checkListenAddr checks --metrics-addr: port 0 is allowed there, it asks
// the kernel to pick one.
func checkListenAddr(addr string) error {
	if err := netaddr.CheckHostPort(addr, netaddr.Listen); err != nil {
		return fmt.Errorf("%v (e.g. 127.0.0.1:9090, or :9090 on every interface)", err)
	}
	return nil
}

// checkPushGateway checks --push-gateway: a push to it can succeed, so the
// only way it fails at exit is the Pushgateway being away.
func checkPushGateway(raw string) error {
	if _, err := netaddr.CheckURL(raw); err != nil {
		return fmt.Errorf("%v: want the Pushgateway's base URL, e.g. http://pushgateway.monitoring:9091", err)
	}
	return nil
}

// checkPushJob refuses an empty --push-job, which the Pushgateway would
// refuse at exit.
func checkPushJob(job string) error {
	if job == "" {
		return fmt.Errorf("the job name of the push cannot be empty (leave the option out for the default, %s)", push.DefaultJob)
	}
	return nil
}

// checkPidfilePath refuses a --pidfile that names a directory: no daemon
// can write its pid there, so lfinit would find no daemon to follow.
func checkPidfilePath(path string) error {
	if os.IsPathSeparator(path[len(path)-1]) {
		return fmt.Errorf("%q ends in a separator: name the file the daemon writes its pid to", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%q is a directory: name the file the daemon writes its pid to", path)
	}
	return nil
}

// checkUserSpec checks --user's syntax; the names are looked up when the
// run is prepared, so parsing reads no file.
func checkUserSpec(spec string) error {
	_, err := ident.ParseSpec(spec)
	return err
}

// checkPush validates the push settings of a run together; the gateway's
// URL and the job were checked as they were set.
func checkPush(p push.Config) error {
	if p.Gateway == "" {
		return nil
	}
	if p.Timeout <= 0 {
		return usagef("--push-timeout must be more than 0 when --push-gateway is set (default %v)", push.DefaultTimeout)
	}
	return nil
}
