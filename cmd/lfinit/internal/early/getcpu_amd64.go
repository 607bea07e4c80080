package early

// sysGetcpu is getcpu(2)'s number, which package syscall has on every
// other architecture.
const sysGetcpu = 309
