package measure

import (
	"bufio"
	"net"
	"strings"
	"time"
)

// FirstLine connects to the TCP address addr and returns the first line
// the other side sends, without its newline, within limit.
func FirstLine(addr string, limit time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, limit)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(limit))
	line, err := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(line), err
}
