#ifndef ATRIUM_SPAWN_H
#define ATRIUM_SPAWN_H
#include <sys/types.h>

/// Starts `argv[0]` (looked up in PATH) as a child process with stdin and stdout on /dev/null, stderr
/// appended to a fresh `log_path`, no other descriptor of the parent (posix_spawn_file_actions_addclosefrom_np,
/// which needs _GNU_SOURCE: hence a C target), the signal mask emptied and SIGINT, SIGTERM, SIGPIPE
/// and SIGHUP at their defaults. Returns 0 and the pid, or an errno value.
int atrium_spawn(char *const argv[], const char *log_path, pid_t *pid);

#endif
