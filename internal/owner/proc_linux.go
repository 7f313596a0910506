package owner

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// procStart reads the start time of pid (clock ticks after boot) from
// /proc/PID/stat. running is false when there is no such process, or only
// its zombie (a zombie holds nothing any more); known is false when /proc
// cannot be read.
func procStart(pid int) (start uint64, running, known bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, true
	}
	if err != nil {
		return 0, false, false
	}
	// The command name, in parentheses, may hold spaces and parentheses:
	// the fields that follow start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 (starttime) is f[19].
	if len(f) < 20 {
		return 0, false, false
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, false, true
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, false, false
	}
	return start, true, true
}
