// The spec's "Simple API Use Example" on a real GPU: a kernel loop protected by a root CD,
// with the GPU state in `cudaMalloc` memory and no copy functions to write. libcd recognises
// device pointers by itself (its built-in CUDA space: the driver is loaded at run time) and
// saves and restores them with pinned, pipelined copies.
//
// A kernel launch "fails" with probability CD_FAULT_RATE (default 0.05): it leaves garbage in
// device memory and raises an error word, as an ECC or application check would. The program
// restores the CD and re-runs the outer iteration. With CD_RESET=1 every fault also resets the
// GPU (cudaDeviceReset) and allocates the state again, at the same address or elsewhere: the
// CD's device ranges follow it with cd_remap_device_region (the recipe of cd.h's
// cd_device_reset).
// At the end the result is compared with the same computation on the CPU.
//
// Build (CUDA 12 or later; libcd installed by scripts/install.sh, see README.md):
//   nvcc -O2 -std=c++17 simple_gpu.cu $(pkg-config --cflags --libs cd) -o simple_gpu
// Run:
//   CD_FAULT_RATE=0.05 CD_SEED=1 ./simple_gpu     (LD_LIBRARY_PATH naming libcd's directory)
//
// This file needs nvcc and a GPU, so CI neither builds nor runs it. Last run: an outside run
// on an NVIDIA H200 (driver 580.159.04, CUDA 13.0), 2026-11-27, of main at b79224b, built
// with nvcc: verified with faults and with CD_RESET=1 (issue 26). There the driver handed the
// old address back after each reset, which the remap now takes as a no-op (it refused it
// before: the program skipped the call when the address was unchanged). scripts/test-gpu.sh
// builds and runs it when a GPU is at hand (DEVELOPERS.md, "When a session has a GPU"). The
// same program without a kernel compiler, tested in CI against the stand-in driver:
// examples/c/simple_cuda.c.
#include <cd.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr uint32_t kOuter = 100;
constexpr uint32_t kNcd = 10;
constexpr size_t kStateWords = size_t{1} << 24;  // 64 MiB of device state

// Stops the program with the failing CUDA call and its error.
#define CUDA_OK(call)                                                                  \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,         \
                         cudaGetErrorString(e_));                                      \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)

// Stops the program with the failing CD call and libcd's message.
void cd_ok(int code, const char *what) {
    if (code == SUCCESS) return;
    char msg[512];
    size_t n = 0;
    cd_last_error_message(msg, sizeof msg, &n);
    std::fprintf(stderr, "%s failed (%d): %s\n", what, code, msg);
    std::exit(1);
}

__host__ __device__ uint32_t mix(uint32_t word, uint32_t i, uint32_t j, uint32_t k) {
    return word * 1664525u + (i * 1000u + j + k);
}

// One launch: updates every state word and folds them into *result (XOR, order-free). A
// faulty launch leaves garbage and raises *error.
__global__ void step(uint32_t *state, size_t n, uint32_t i, uint32_t j, uint32_t *result,
                     int corrupt, uint32_t *error) {
    uint32_t folded = 0;
    for (size_t k = blockIdx.x * size_t{blockDim.x} + threadIdx.x; k < n;
         k += size_t{gridDim.x} * blockDim.x) {
        uint32_t w = mix(state[k], i, j, static_cast<uint32_t>(k));
        state[k] = corrupt ? 0xdeadbeefu : w;
        folded ^= w;
    }
    atomicXor(result, folded);
    if (corrupt && blockIdx.x == 0 && threadIdx.x == 0) *error = 1;
}

uint64_t rng = 0x9e3779b97f4a7c15ULL;

double random_unit() {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return static_cast<double>(rng >> 11) / static_cast<double>(1ULL << 53);
}

// The same computation on the CPU, without faults and without CDs.
uint32_t cpu_run() {
    std::vector<uint32_t> state(kStateWords, 0);
    uint32_t checksum = 0;
    for (uint32_t i = 1; i <= kOuter; i++)
        for (uint32_t j = 1; j <= kNcd; j++) {
            uint32_t folded = 0;
            for (size_t k = 0; k < kStateWords; k++) {
                state[k] = mix(state[k], i, j, static_cast<uint32_t>(k));
                folded ^= state[k];
            }
            checksum = checksum * 7u + (folded ^ i);
        }
    return checksum;
}

// The device buffers: the state (protected by the CD), the result and error words.
struct Gpu {
    uint32_t *state = nullptr, *words = nullptr;  // words[0]: result, words[1]: error
    cudaStream_t stream = nullptr;

    void allocate() {
        CUDA_OK(cudaMalloc(&state, kStateWords * sizeof(uint32_t)));
        CUDA_OK(cudaMalloc(&words, 2 * sizeof(uint32_t)));
        CUDA_OK(cudaStreamCreate(&stream));
    }
};

}  // namespace

int main() {
    const char *rate = std::getenv("CD_FAULT_RATE"), *seed = std::getenv("CD_SEED");
    const double fault_rate = rate ? std::atof(rate) : 0.05;
    const bool reset = std::getenv("CD_RESET") && std::atoi(std::getenv("CD_RESET"));
    if (seed) rng ^= std::strtoull(seed, nullptr, 10) * 0x2545f4914f6cdd1dULL;

    Gpu gpu;
    gpu.allocate();
    CUDA_OK(cudaMemset(gpu.state, 0, kStateWords * sizeof(uint32_t)));

    uint32_t node_copy_of_result = 0, checksum = 0, i = 1, j = 1, faults = 0;
    // The variable gpu.state is saving GPU memory; i, j, node_copy_of_result and checksum
    // are saving node memory. No memory space to register: the pointer says it is CUDA's.
    cd_addrspec as[5] = {
        {gpu.state, kStateWords * sizeof(uint32_t), READ_WRITE, GLOBAL},
        {&node_copy_of_result, sizeof node_copy_of_result, READ_WRITE, GLOBAL},
        {&i, sizeof i, READ_WRITE, GLOBAL},
        {&j, sizeof j, READ_WRITE, GLOBAL},
        {&checksum, sizeof checksum, READ_WRITE, GLOBAL}};
    int error = 0;
    cd_handle cd = create_cd(nullptr, nullptr, COMM_LOGGING_DISABLED, "root", &error);
    cd_ok(error, "create_cd");

    while (i <= kOuter) {
        // before data is modified and after each advance: promote the ranges
        cd_ok(add_to_cd_via_copy(cd, as, 5), "add_to_cd_via_copy");
        bool failed = false;
        for (j = 1; j <= kNcd && !failed; j++) {
            const int corrupt = fault_rate > 0 && random_unit() < fault_rate;
            CUDA_OK(cudaMemsetAsync(gpu.words, 0, 2 * sizeof(uint32_t), gpu.stream));
            step<<<264, 256, 0, gpu.stream>>>(gpu.state, kStateWords, i, j, gpu.words, corrupt,
                                              gpu.words + 1);
            CUDA_OK(cudaGetLastError());
            uint32_t words[2];
            CUDA_OK(cudaMemcpyAsync(words, gpu.words, sizeof words, cudaMemcpyDeviceToHost,
                                    gpu.stream));
            CUDA_OK(cudaStreamSynchronize(gpu.stream));
            if (words[1]) {
                failed = true;
                faults++;
                if (reset) {
                    // the recipe for cudaMalloc arrays: reset, allocate again, tell libcd,
                    // move the CD's device range to the new address (often the old one: the
                    // remap is then a no-op that succeeds)
                    uint32_t *old_state = gpu.state;
                    CUDA_OK(cudaDeviceReset());
                    gpu.allocate();
                    cd_ok(cd_device_reset(), "cd_device_reset");
                    cd_ok(cd_remap_device_region(old_state, gpu.state,
                                                 kStateWords * sizeof(uint32_t)),
                          "cd_remap_device_region");
                    as[0].address = gpu.state;
                }
                cd_ok(restore_cd(cd), "restore_cd");
                break;
            }
            node_copy_of_result = words[0];
            checksum = checksum * 7u + (node_copy_of_result ^ i);
        }
        if (failed) continue;
        i++;  // this outer iteration is done: the advance saves the next one's start
        if (advance_cd_point_in_time(cd) == FAILURE)
            cd_ok(cd_last_error(), "advance_cd_point_in_time");
    }
    cd_stats st{};
    cd_ok(cd_get_stats(cd, &st), "cd_get_stats");
    cd_ok(commit_cd(cd), "commit_cd");
    CUDA_OK(cudaFree(gpu.state));
    CUDA_OK(cudaFree(gpu.words));

    const uint32_t expected = cpu_run();
    std::printf("simple_gpu (CUDA): %u faults met, %llu restores, %llu advances%s\n", faults,
                static_cast<unsigned long long>(st.restores),
                static_cast<unsigned long long>(st.advances), reset ? ", GPU reset at each" : "");
    std::printf("simple_gpu (CUDA): result %08x, CPU run %08x: %s\n", checksum, expected,
                checksum == expected ? "equal" : "DIFFERENT");
    return checksum == expected ? 0 : 1;
}
