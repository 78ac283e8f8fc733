#include <catch2/catch.hpp>

#include <vector>

#include "ptdsim/calibrate/collective_check.hpp"

// The verification rules of ptdsim-calibrate, replayed on the host: every collective is carried out
// here by its definition (NCCL's documentation of each call) on the inputs the tool writes, and
// check::expected must agree with every element; a single corrupted element must be counted.
using namespace ptdsim;
using namespace ptdsim::calibrate;
using core::Collective;

namespace {

// Rank r's send buffer as the tool fills it.
std::vector<float> input(Collective op, int n, int r, std::uint64_t count) {
  std::vector<float> v(check::input_elements(op, n, count));
  for (std::uint64_t i = 0; i < v.size(); ++i) v[i] = check::value(r, i);
  return v;
}

// What rank q's receive buffer holds after the collective, from the definitions.
std::vector<float> reference(Collective op, int n, int q, std::uint64_t count) {
  std::vector<std::vector<float>> in;
  for (int r = 0; r < n; ++r) in.push_back(input(op, n, r, count));
  std::vector<float> out;
  switch (op) {
    case Collective::all_reduce:
    case Collective::reduce:
      out.assign(count, 0.0f);
      for (int r = n - 1; r >= 0; --r)  // any order: the sums are exact
        for (std::uint64_t i = 0; i < count; ++i) out[i] += in[static_cast<std::size_t>(r)][i];
      break;
    case Collective::reduce_scatter:
      out.assign(count, 0.0f);
      for (int r = 0; r < n; ++r)
        for (std::uint64_t i = 0; i < count; ++i) out[i] += in[static_cast<std::size_t>(r)][q * count + i];
      break;
    case Collective::all_gather:
      for (int r = 0; r < n; ++r) out.insert(out.end(), in[static_cast<std::size_t>(r)].begin(), in[static_cast<std::size_t>(r)].end());
      break;
    case Collective::broadcast: out = in[0]; break;
    case Collective::all_to_all:
      for (int p = 0; p < n; ++p)
        for (std::uint64_t i = 0; i < count; ++i) out.push_back(in[static_cast<std::size_t>(p)][q * count + i]);
      break;
    case Collective::send_recv: out = in[static_cast<std::size_t>((q + n - 1) % n)]; break;
  }
  return out;
}

}  // namespace

TEST_CASE("calibrate: the expected values of every collective agree with the collective carried out",
          "[calibrate][check]") {
  const Collective ops[] = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                            Collective::all_to_all, Collective::broadcast,  Collective::reduce,
                            Collective::send_recv};
  for (Collective op : ops) {
    for (int n : {1, 2, 3, 8}) {  // 1: ptdsim-calibrate on one GPU checks its collectives too
      for (std::uint64_t count : {1u, 7u, 1000u}) {
        for (int q = 0; q < n; ++q) {
          INFO("op " << static_cast<int>(op) << " n " << n << " count " << count << " rank " << q);
          const auto e = check::expect(op, n, q, count);
          const auto out = reference(op, n, q, count);
          REQUIRE(out.size() == check::output_elements(e));
          CHECK(check::count_wrong(e, out.data()) == 0);
          if (!e.checked) continue;
          // the check can fail: one corrupted element is one wrong element
          auto bad = out;
          bad[bad.size() / 2] += 1.0f;
          CHECK(check::count_wrong(e, bad.data()) == 1);
          // an output the collective never wrote is all wrong
          std::vector<float> untouched(out.size(), check::kUnwritten);
          CHECK(check::count_wrong(e, untouched.data()) == out.size());
        }
      }
    }
  }
}

TEST_CASE("calibrate: a block at another rank's place is caught", "[calibrate][check]") {
  // all_gather on 8 ranks: swapping the blocks of ranks 2 and 5 leaves most elements wrong (their
  // values differ unless scale and offset of the two ranks and the element term all coincide)
  const std::uint64_t count = 1000;
  const auto e = check::expect(Collective::all_gather, 8, 0, count);
  auto out = reference(Collective::all_gather, 8, 0, count);
  for (std::uint64_t i = 0; i < count; ++i) std::swap(out[2 * count + i], out[5 * count + i]);
  CHECK(check::count_wrong(e, out.data()) > count);
}

TEST_CASE("calibrate: sums over many ranks stay exact in float", "[calibrate][check]") {
  // the largest element is 15 * 8 + 15 = 135; 100,000 ranks sum to at most 1.35e7 < 2^24 = 1.68e7
  const auto s = check::rank_sums(100000);
  CHECK(s.scale * 15 + s.offset < 16777216.0);
  CHECK(static_cast<double>(static_cast<float>(s.scale)) == s.scale);
  CHECK(static_cast<double>(static_cast<float>(s.offset)) == s.offset);
}
