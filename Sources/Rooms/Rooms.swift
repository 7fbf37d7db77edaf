// The room registry (filled in below).
