package faults_test

import (
	"testing"

	"github.com/distlock/lock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Redis) }
