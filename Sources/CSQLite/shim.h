#include <sqlite3.h>

/// `sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes)`: how large a statement journal may grow
/// in memory before SQLite moves it to a temporary file. `sqlite3_config` is variadic, which
/// Swift cannot call, hence this wrapper. It must run before SQLite initializes (before the
/// process opens its first database); afterwards SQLite answers SQLITE_MISUSE and changes nothing.
static inline int healthgate_sqlite3_config_statement_journal_spill(int bytes) {
    return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes);
}
