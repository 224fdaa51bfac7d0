// Reference counts changed with plain loads and stores while one thread only
// has changed them (core/refcount.h): the first change claims the process
// for its thread, the first change by another thread shares the counts for
// good, and no change is lost at that moment, whatever the owner is doing.
//
// The mode only moves forward in a process, so each case runs in a fork's
// child of this (single-threaded, count-free) test process and reports
// through its exit status.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "core/process_barrier.h"
#include "core/refcount.h"

namespace {

using ag::RefCounted;
using namespace ag::refcount_detail;

std::atomic<int> g_destroyed{0};

struct Counted : RefCounted {
  ~Counted() override { g_destroyed.fetch_add(1, std::memory_order_relaxed); }
};

// Exit status of body() run in a child process; 200 + signal if it died.
template <class F>
int in_child(F body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 255;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

#define REQUIRE(cond, code) \
  do {                      \
    if (!(cond)) return (code); \
  } while (0)

class OwnerCounts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ag::register_process_barrier()) GTEST_SKIP() << "membarrier(2) refused: counts are atomic from the start";
    ASSERT_EQ(count_mode(), kUnclaimed) << "the test process itself changed a count";
  }
};

TEST_F(OwnerCounts, FirstChangeClaimsAndAnotherThreadShares) {
  EXPECT_EQ(in_child([] {
              auto* x = new Counted;  // a new object's count is set, not changed
              REQUIRE(count_mode() == kUnclaimed, 1);
              x->retain();
              REQUIRE(count_mode() == kOwned && tl_owner, 2);
              REQUIRE(x->use_count() == 2, 3);
              x->release();
              REQUIRE(x->use_count() == 1 && count_mode() == kOwned, 4);
              bool other_is_owner = true;
              std::thread([&] {
                x->retain();
                other_is_owner = tl_owner;
                x->release();
              }).join();
              REQUIRE(!other_is_owner && count_mode() == kShared, 5);
              REQUIRE(x->use_count() == 1 && g_destroyed.load() == 0, 6);
              x->retain();  // the owner's changes are atomic now
              x->release();
              x->release();
              REQUIRE(g_destroyed.load() == 1, 7);
              return 0;
            }),
            0);
}

// The owner changes counts without pause while another thread starts
// changing the same counts: the sharing must wait for the owner's change in
// progress, or one of the two is lost and a count ends off by one. Many
// children, so that the sharing lands at every point of the owner's changes.
TEST_F(OwnerCounts, NoChangeIsLostWhenCountsBecomeShared) {
  constexpr int kChildren = 60, kObjects = 4;
  for (int c = 0; c < kChildren; ++c) {
    ASSERT_EQ(in_child([] {
                std::vector<Counted*> xs;
                for (int i = 0; i < kObjects; ++i) xs.push_back(new Counted);
                std::atomic<long> owner_changes{0};
                std::atomic<bool> stop{false};
                xs[0]->retain();
                xs[0]->release();  // the main thread is the owner
                std::thread other([&] {
                  while (owner_changes.load(std::memory_order_relaxed) < 2000) std::this_thread::yield();
                  for (int r = 0; r < 20000; ++r) {
                    Counted* x = xs[r % kObjects];
                    x->retain();
                    if ((r / kObjects) % 2) x->release();
                  }
                  stop.store(true);
                });
                long k = 0;
                while (!stop.load(std::memory_order_relaxed)) {
                  Counted* x = xs[k % kObjects];
                  x->retain();
                  x->retain();
                  x->release();
                  x->release();
                  owner_changes.store(++k, std::memory_order_relaxed);
                }
                other.join();
                // Each object: 1 of its own, 2500 left by the other thread.
                for (Counted* x : xs) REQUIRE(x->use_count() == 1 + 20000 / kObjects / 2, 1);
                REQUIRE(count_mode() == kShared, 2);
                for (Counted* x : xs) {
                  for (int i = 0; i <= 20000 / kObjects / 2; ++i) x->release();
                }
                REQUIRE(g_destroyed.load() == kObjects, 3);
                return 0;
              }),
              0)
        << "child " << c;
  }
}

// An owner that has exited is never busy: the first change by another
// thread shares at once.
TEST_F(OwnerCounts, OwnerThatExitedLeavesCountsToShare) {
  EXPECT_EQ(in_child([] {
              auto* x = new Counted;
              std::thread([x] {
                x->retain();
                x->release();
              }).join();
              REQUIRE(count_mode() == kOwned && !tl_owner, 1);
              x->retain();
              REQUIRE(count_mode() == kShared && x->use_count() == 2, 2);
              x->release();
              x->release();
              REQUIRE(g_destroyed.load() == 1, 3);
              return 0;
            }),
            0);
}

// A weak pointer's changes (try_retain, mark_weakly_referenced) have no
// plain form: another thread's share the counts first.
TEST_F(OwnerCounts, WeakPointerChangesShare) {
  EXPECT_EQ(in_child([] {
              auto* x = new Counted;
              x->retain();
              x->release();
              REQUIRE(count_mode() == kOwned, 1);
              bool got = false;
              std::thread([&] { got = x->try_retain(); }).join();
              REQUIRE(got && count_mode() == kShared && x->use_count() == 2, 2);
              x->release();
              x->release();
              REQUIRE(g_destroyed.load() == 1, 3);
              return 0;
            }),
            0);
}

// A fork's child has only the forking thread: it keeps owning if it was the
// owner, and shares otherwise (the owner does not exist there).
TEST_F(OwnerCounts, ForkKeepsOrEndsOwnership) {
  EXPECT_EQ(in_child([] {
              auto* x = new Counted;
              x->retain();
              x->release();
              REQUIRE(count_mode() == kOwned && tl_owner, 1);
              const int by_owner = in_child([x] {
                REQUIRE(count_mode() == kOwned && tl_owner, 1);
                x->retain();
                REQUIRE(count_mode() == kOwned && x->use_count() == 2, 2);
                return 0;
              });
              REQUIRE(by_owner == 0, 10 + by_owner);
              int by_other = -1;
              std::thread([&] {
                by_other = in_child([x] {
                  REQUIRE(count_mode() == kShared && !tl_owner, 1);
                  x->retain();
                  REQUIRE(x->use_count() == 2, 2);
                  return 0;
                });
              }).join();
              REQUIRE(by_other == 0, 20 + by_other);
              REQUIRE(count_mode() == kOwned, 3);  // the parent's mode is its own
              x->release();
              REQUIRE(g_destroyed.load() == 1, 4);
              return 0;
            }),
            0);
}

}  // namespace
