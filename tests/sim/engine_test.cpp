#include "ptdsim/sim/engine.hpp"

#include <catch2/catch.hpp>
#include <stdexcept>

#include "ptdsim/core/names.hpp"
#include "ptdsim/sim/graph_check.hpp"

using namespace ptdsim::sim;

namespace {

TaskSpec compute(double s, int rank = 0) {
  TaskSpec t;
  t.kind = TaskKind::forward;
  t.stream = StreamKind::compute;
  t.rank = rank;
  t.duration_s = s;
  return t;
}

TaskSpec transfer(double bytes, int link, StreamKind stream, double alpha_s = 0, int rank = 0) {
  TaskSpec t;
  t.kind = task_kind(ptdsim::core::CommKind::dp_reduce);
  t.stream = stream;
  t.rank = rank;
  t.duration_s = alpha_s;
  t.work = bytes;
  t.bytes = bytes;
  t.link = link;
  return t;
}

}  // namespace

TEST_CASE("sim: a stream runs its tasks one at a time in program order", "[sim][engine]") {
  Engine e(1);
  const TaskId a = e.add(compute(1.0));
  const TaskId b = e.add(compute(2.0));
  const TaskId c = e.add(compute(0.5));
  e.run();
  // no dependencies, one stream: back to back, 1 + 2 + 0.5 = 3.5 s
  CHECK(e.start(a) == 0.0);
  CHECK(e.start(b) == Approx(1.0).epsilon(1e-12));
  CHECK(e.start(c) == Approx(3.0).epsilon(1e-12));
  CHECK(e.makespan() == Approx(3.5).epsilon(1e-12));
  for (TaskId t : {a, b, c}) CHECK(e.state(t) == TaskState::done);
  // the critical path is the stream itself
  CHECK(e.critical_path() == std::vector<TaskId>{a, b, c});
}

TEST_CASE("sim: the critical path ends at the last task to finish, the last added of a tie", "[sim][engine]") {
  // Two ranks' streams end together at 1 s: the task added last ends the path, on whichever stream.
  for (const bool rank1_first : {false, true}) {
    Engine e(2);
    const TaskId first = e.add(compute(1.0, rank1_first ? 1 : 0));
    const TaskId second = e.add(compute(1.0, rank1_first ? 0 : 1));
    e.run();
    CHECK(e.finish(first) == e.finish(second));
    CHECK(e.critical_path() == std::vector<TaskId>{second});
  }
  // A zero-length task at the end of rank 0's stream ties with rank 1's task added before it: the
  // zero-length one is the last added, so the path is rank 0's stream (x, then z).
  Engine e(2);
  const TaskId x = e.add(compute(1.0, 0));
  const TaskId y = e.add(compute(1.0, 1));
  const TaskId z = e.add(compute(0.0, 0));
  e.run();
  CHECK(e.finish(z) == e.finish(y));
  CHECK(e.critical_path() == std::vector<TaskId>{x, z});
  // and a task added later that ends earlier does not end it
  Engine f(2);
  const TaskId long0 = f.add(compute(2.0, 0));
  f.add(compute(1.0, 1));
  f.run();
  CHECK(f.critical_path() == std::vector<TaskId>{long0});
}

TEST_CASE("sim: dependencies across ranks and streams order the work", "[sim][engine]") {
  Engine e(2);
  const int link = e.add_link(1e9);
  const TaskId f0 = e.add(compute(1.0, 0));
  TaskSpec send = transfer(0.5e9, link, StreamKind::pp_send);  // 0.5 s alone
  const TaskId s = e.add(send);
  const TaskId f1 = e.add(compute(2.0, 1));
  const TaskId other = e.add(compute(0.25, 1));  // after f1 on rank 1's compute stream
  e.depend(f0, s);
  e.depend(s, f1);
  e.run();
  // f0 [0,1], send [1,1.5], f1 [1.5,3.5], other [3.5,3.75]
  CHECK(e.start(f1) == Approx(1.5).epsilon(1e-12));
  CHECK(e.makespan() == Approx(3.75).epsilon(1e-12));
  CHECK(e.critical_path() == std::vector<TaskId>{f0, s, f1, other});
  CHECK(static_critical_path_s(e) == Approx(e.makespan()).epsilon(1e-12));
}

TEST_CASE("sim: two transfers sharing one link each take twice as long", "[sim][engine][sharing]") {
  Engine e(1);
  const int link = e.add_link(100e9);  // 100 GB/s
  // 1 GB each on two streams of the same GPU, both on the same link: alone 10 ms each; together
  // each gets 50 GB/s and both end at 20 ms.
  const TaskId a = e.add(transfer(1e9, link, StreamKind::dp));
  const TaskId b = e.add(transfer(1e9, link, StreamKind::pp_send));
  e.run();
  CHECK(e.alone_s(a) == Approx(0.010).epsilon(1e-12));
  CHECK(e.finish(a) == Approx(0.020).epsilon(1e-12));
  CHECK(e.finish(b) == Approx(0.020).epsilon(1e-12));

  SECTION("on different links they do not slow each other") {
    Engine f(1);
    const int l0 = f.add_link(100e9), l1 = f.add_link(100e9);
    const TaskId x = f.add(transfer(1e9, l0, StreamKind::dp));
    const TaskId y = f.add(transfer(1e9, l1, StreamKind::pp_send));
    f.run();
    CHECK(f.finish(x) == Approx(0.010).epsilon(1e-12));
    CHECK(f.finish(y) == Approx(0.010).epsilon(1e-12));
  }
}

TEST_CASE("sim: shares change as transfers join and leave a link", "[sim][engine][sharing]") {
  Engine e(1);
  const int link = e.add_link(1.0);  // 1 unit per second
  // A: 2 units from t=0. B: 0.5 units, on another stream, after a 1 s compute task.
  // [0,1] A alone: 1 unit done, 1 left. [1,2] both at 1/2: B done at 2, A has 0.5 left.
  // [2,2.5] A alone again: A ends at 2.5.
  const TaskId a = e.add(transfer(2.0, link, StreamKind::dp));
  const TaskId c = e.add(compute(1.0));
  const TaskId b = e.add(transfer(0.5, link, StreamKind::pp_send));
  e.depend(c, b);
  e.run();
  CHECK(e.finish(b) == Approx(2.0).epsilon(1e-12));
  CHECK(e.finish(a) == Approx(2.5).epsilon(1e-12));
}

TEST_CASE("sim: a transfer waits its latency before moving bytes", "[sim][engine]") {
  Engine e(1);
  const int link = e.add_link(1e9);
  // alpha 10 us + 1 MB at 1 GB/s = 10 us + 1 ms
  const TaskId t = e.add(transfer(1e6, link, StreamKind::tp, 10e-6));
  e.run();
  CHECK(e.finish(t) == Approx(1.010e-3).epsilon(1e-12));
  CHECK(e.alone_s(t) == Approx(1.010e-3).epsilon(1e-12));
}

TEST_CASE("sim: a cycle is detected, not run", "[sim][engine][graph]") {
  Engine e(1);
  const TaskId a = e.add(compute(1.0));
  TaskSpec other = compute(1.0);
  other.stream = StreamKind::tp;
  const TaskId b = e.add(other);
  e.depend(a, b);
  e.depend(b, a);
  CHECK_FALSE(is_acyclic(e));
  CHECK_THROWS_AS(e.run(), std::logic_error);

  SECTION("a stream order against the dependencies is a cycle too") {
    Engine f(1);
    const TaskId x = f.add(compute(1.0));
    const TaskId y = f.add(compute(1.0));  // after x on the same stream
    f.depend(y, x);
    CHECK_FALSE(is_acyclic(f));
    CHECK_THROWS_AS(f.run(), std::logic_error);
  }
}

TEST_CASE("sim: bad edges and tasks are rejected", "[sim][engine]") {
  Engine e(1);
  const TaskId a = e.add(compute(1.0));
  CHECK_THROWS_AS(e.depend(a, a), std::invalid_argument);
  CHECK_THROWS_AS(e.depend(a, 7), std::invalid_argument);
  CHECK_THROWS_AS(e.add(compute(1.0, 3)), std::invalid_argument);
  CHECK_THROWS_AS(e.add(compute(-1.0)), std::invalid_argument);
  CHECK_THROWS_AS(e.add(transfer(1.0, 0, StreamKind::dp)), std::invalid_argument);  // no link
}

TEST_CASE("sim: tasks sharing one description keep their own micro-batch, times and ids", "[sim][engine]") {
  Engine e(2);
  const std::int32_t d = e.add_spec(compute(1.0, 1));  // rank 1's pass, 1 s, added once
  const TaskId x0 = e.add(compute(0.75, 0));
  const TaskId y0 = e.add(d, 0);
  const TaskId y1 = e.add(d, 1);
  const TaskId x1 = e.add(compute(0.75, 0));
  e.depend(x1, y1);
  CHECK(e.descriptions() == 3);
  CHECK_THROWS_AS(e.add(7, 0), std::invalid_argument);
  CHECK_THROWS_AS(e.add(-1, 0), std::invalid_argument);
  e.run();
  // The run numbers tasks stream by stream (x0 x1 | y0 y1), not as added (x0 y0 y1 x1); what the
  // caller sees is by its own ids. Rank 0: x0 0-0.75, x1 0.75-1.5; rank 1: y0 0-1, then y1 waits
  // for x1 (1.5 > y0's 1.0, so x1 binds) and runs 1.5-2.5.
  CHECK(e.microbatch(y0) == 0);
  CHECK(e.microbatch(y1) == 1);
  CHECK(e.spec(y1).duration_s == 1.0);
  CHECK(e.spec(y1).microbatch == 1);
  CHECK(e.finish(y0) == 1.0);
  CHECK(e.start(x1) == 0.75);
  CHECK(e.start(y1) == 1.5);
  CHECK(e.finish(y1) == 2.5);
  CHECK(e.binding(y1) == x1);
  CHECK(e.binding(x1) == x0);
  CHECK(e.binding(y0) == -1);
  CHECK(e.critical_path() == std::vector<TaskId>{x0, x1, y1});
  const auto rank1 = e.stream_tasks(1, StreamKind::compute);
  CHECK(std::vector<TaskId>(rank1.begin(), rank1.end()) == std::vector<TaskId>{y0, y1});
}

TEST_CASE("sim: collectives running beside compute slow it by their SM share", "[sim][engine][contention]") {
  // share 0.2: one running collective leaves compute 0.8 of its speed, two leave 0.6
  Engine e(2);
  e.set_comm_share(0.2);
  const int nvlink = e.add_link(1.0), nic = e.add_link(1.0);
  SECTION("one collective for the first 0.5 s: 0.4 s of work done by then, 0.6 s left: ends at 1.1") {
    const TaskId c = e.add(compute(1.0));
    const TaskId x = e.add(transfer(0.5, nic, StreamKind::dp));
    e.run();
    CHECK(e.finish(x) == Approx(0.5).epsilon(1e-12));  // the collective itself is not slowed
    CHECK(e.finish(c) == Approx(1.1).epsilon(1e-12));
  }
  SECTION("two at once for 0.5 s (0.3 s of work), then one for 0.5 s (0.4 s): ends at 1.3") {
    const TaskId c = e.add(compute(1.0));
    e.add(transfer(0.5, nic, StreamKind::dp));
    e.add(transfer(1.0, nvlink, StreamKind::tp));
    e.run();
    CHECK(e.finish(c) == Approx(1.3).epsilon(1e-12));
  }
  SECTION("the latency phase counts, and a collective on another rank does not") {
    const TaskId c = e.add(compute(1.0));
    e.add(transfer(0.25, nic, StreamKind::dp, /*alpha_s=*/0.25));  // running [0, 0.5]
    e.add(transfer(1.0, nvlink, StreamKind::tp, 0, /*rank=*/1));
    e.run();
    CHECK(e.finish(c) == Approx(1.1).epsilon(1e-12));
  }
  SECTION("compute that starts while a collective runs, and a collective that starts mid-task") {
    const TaskId x = e.add(transfer(2.0, nic, StreamKind::dp));      // [0, 2]
    const TaskId a = e.add(compute(0.4));                             // [0, 0.5] at 0.8
    const TaskId b = e.add(compute(2.0));                             // 1.2 s at 0.8 to t=2, 0.8 s alone
    e.run();
    CHECK(e.finish(x) == Approx(2.0).epsilon(1e-12));
    CHECK(e.finish(a) == Approx(0.5).epsilon(1e-12));
    CHECK(e.finish(b) == Approx(2.8).epsilon(1e-12));
  }
  SECTION("compute keeps at least a tenth of its speed however many collectives run") {
    e.set_comm_share(0.3);  // four at once would leave 1 - 1.2 < 0
    const TaskId c = e.add(compute(1.0));
    for (StreamKind k : {StreamKind::tp, StreamKind::cp, StreamKind::dp, StreamKind::dp_gather})
      e.add(transfer(1.0, k == StreamKind::dp || k == StreamKind::dp_gather ? nic : nvlink, k));
    e.run();
    // two per link, each link shared: all four run [0, 2] at rate 0.1: 0.2 s done, 0.8 s after
    CHECK(e.finish(c) == Approx(2.8).epsilon(1e-12));
  }
  SECTION("share 0 leaves compute alone") {
    e.set_comm_share(0.0);
    const TaskId c = e.add(compute(1.0));
    e.add(transfer(0.5, nic, StreamKind::dp));
    e.run();
    CHECK(e.finish(c) == Approx(1.0).epsilon(1e-12));
  }
  CHECK_THROWS_AS(e.set_comm_share(1.0), std::invalid_argument);
  CHECK_THROWS_AS(e.set_comm_share(-0.1), std::invalid_argument);
}

TEST_CASE("sim: a pipeline send does not slow the compute beside it", "[sim][engine][contention]") {
  Engine e(1);
  e.set_comm_share(0.2);
  const int nic = e.add_link(1.0);
  const TaskId c = e.add(compute(1.0));
  TaskSpec send = transfer(0.5, nic, StreamKind::pp_send);
  send.kind = task_kind(ptdsim::core::CommKind::p2p);
  e.add(send);
  e.run();
  CHECK(e.finish(c) == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("sim: a communication task's kind is its core::CommKind, named as core names it", "[sim][engine]") {
  using ptdsim::core::CommKind;
  for (int k = 0; k < ptdsim::core::kCommKindCount; ++k) {
    const auto c = static_cast<CommKind>(k);
    const TaskKind t = task_kind(c);
    CHECK(!is_compute(t));
    CHECK(comm_kind(t) == c);
    CHECK(name(t) == ptdsim::core::name(c));
  }
  for (TaskKind t : {TaskKind::forward, TaskKind::backward, TaskKind::backward_input, TaskKind::backward_weight,
                     TaskKind::optimizer})
    CHECK(is_compute(t));
  CHECK(name(task_kind(CommKind::p2p)) == "PP p2p");
  // a pipeline send holds no SMs; a TP collective on its stream does
  CHECK(!is_collective(StreamKind::pp_send, task_kind(CommKind::p2p)));
  CHECK(is_collective(StreamKind::tp, task_kind(CommKind::tp)));
  CHECK(!is_collective(StreamKind::compute, TaskKind::forward));
}
