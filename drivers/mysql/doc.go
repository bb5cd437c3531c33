// Package mysql is a lock driver for MySQL and MariaDB, registered as
// "mysql", over github.com/go-sql-driver/mysql.
package mysql
