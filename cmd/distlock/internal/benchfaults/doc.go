// Package benchfaults holds the test of 'distlock bench --faults' on the
// test servers, which kills and restarts some of them: a package of its
// own, so that it can hold those servers alone while the command's other
// tests share them. It has no code besides its tests.
package benchfaults
