//go:build !amd64

package early

import "syscall"

// sysGetcpu is getcpu(2)'s number.
const sysGetcpu = syscall.SYS_GETCPU
