; The kernels the built-in CUDA space loads at run time from PTX text (cuModuleLoadData), so
; nothing needs nvcc to build: this LLVM IR is the source, kernels.ptx the committed output of
;   opt -O3 kernels.ll | llc -march=nvptx64 -mcpu=sm_70 -mattr=+ptx63 -O3 -o kernels.ptx
; (LLVM 14, /usr/lib/llvm-14/bin; opt inlines fmix64; the driver compiles PTX of an older ISA for any newer GPU, an H100 or H200
; included). cd-cuda's test `ptx_matches_its_source` checks the two agree where llc is
; installed. The stand-in driver plays each kernel on the host by name
; (cd-cuda/standin/cuda_standin.c), with the same arithmetic.
;
; cd_block_sums(data, nwords, words_per_block, sums, seed): for each block b of
;   `words_per_block` 64-bit words of the array at `data` (`nwords` words, the last block may
;   be short), sums[2b] = sum over its words i (index from the array's start, wrapping u64
;   arithmetic) of fmix64(w_i ^ (i * K1 + seed)), and sums[2b + 1] = the same of
;   fmix64(rotl(w_i, 29) ^ (i * K2 + ~seed)): 128 bits per block. One CTA of 256 threads per
;   block (grid-stride over blocks), threads over the block's words (coalesced), a tree
;   reduction in shared memory.
; cd_gather_blocks(dst, src, list, count, block_bytes, src_len): copies block list[j] of the
;   array at `src` (`src_len` bytes; the last block may be short) to dst + j * block_bytes,
;   for j < count: the changed blocks packed together for one transfer.
; cd_bench_stencil(out, in, n): out[i] = 0.25 in[i-1] + 0.5 in[i] + 0.25 in[i+1] (f32, edges
;   clamped): the memory-bound kernel of the stall bench.

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@sh = internal addrspace(3) global [512 x i64] undef, align 8

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare void @llvm.nvvm.barrier0()

define internal i64 @fmix64(i64 %x0) alwaysinline {
  %a = lshr i64 %x0, 33
  %x1 = xor i64 %x0, %a
  %x2 = mul i64 %x1, -49064778989728563      ; 0xff51afd7ed558ccd
  %b = lshr i64 %x2, 33
  %x3 = xor i64 %x2, %b
  %x4 = mul i64 %x3, -4265267296055464877    ; 0xc4ceb9fe1a85ec53
  %c = lshr i64 %x4, 33
  %x5 = xor i64 %x4, %c
  ret i64 %x5
}

define void @cd_block_sums(i64 %data, i64 %nwords, i64 %wpb, i64 %sums, i64 %seed) {
entry:
  %tid32 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %nt32 = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cta32 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ncta32 = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %tid = zext i32 %tid32 to i64
  %nt = zext i32 %nt32 to i64
  %cta = zext i32 %cta32 to i64
  %ncta = zext i32 %ncta32 to i64
  %wpb1 = add i64 %wpb, -1
  %nw1 = add i64 %nwords, %wpb1
  %nblocks = udiv i64 %nw1, %wpb
  %nseed = xor i64 %seed, -1
  %sh1 = getelementptr [512 x i64], [512 x i64] addrspace(3)* @sh, i64 0, i64 %tid
  %tid2 = add i64 %tid, 256
  %sh2 = getelementptr [512 x i64], [512 x i64] addrspace(3)* @sh, i64 0, i64 %tid2
  %half0 = lshr i64 %nt, 1
  %first = icmp eq i64 %tid, 0
  br label %loop_b

loop_b:
  %b = phi i64 [ %cta, %entry ], [ %b_next, %store_done ]
  %more_b = icmp ult i64 %b, %nblocks
  br i1 %more_b, label %body_b, label %exit

body_b:
  %start = mul i64 %b, %wpb
  %end0 = add i64 %start, %wpb
  %short = icmp ult i64 %nwords, %end0
  %end = select i1 %short, i64 %nwords, i64 %end0
  %i0 = add i64 %start, %tid
  br label %loop_i

loop_i:
  %i = phi i64 [ %i0, %body_b ], [ %i_next, %body_i ]
  %s1 = phi i64 [ 0, %body_b ], [ %s1n, %body_i ]
  %s2 = phi i64 [ 0, %body_b ], [ %s2n, %body_i ]
  %more_i = icmp ult i64 %i, %end
  br i1 %more_i, label %body_i, label %reduce

body_i:
  %off = shl i64 %i, 3
  %addr = add i64 %data, %off
  %p = inttoptr i64 %addr to i64 addrspace(1)*
  %w = load i64, i64 addrspace(1)* %p, align 8
  %k1m = mul i64 %i, -7046029254386353131    ; 0x9E3779B97F4A7C15
  %k1 = add i64 %k1m, %seed
  %x1 = xor i64 %w, %k1
  %f1 = call i64 @fmix64(i64 %x1)
  %rl = shl i64 %w, 29
  %rr = lshr i64 %w, 35
  %r = or i64 %rl, %rr
  %k2m = mul i64 %i, -4417276706812531889    ; 0xC2B2AE3D27D4EB4F
  %k2 = add i64 %k2m, %nseed
  %x2 = xor i64 %r, %k2
  %f2 = call i64 @fmix64(i64 %x2)
  %s1n = add i64 %s1, %f1
  %s2n = add i64 %s2, %f2
  %i_next = add i64 %i, %nt
  br label %loop_i

reduce:
  store i64 %s1, i64 addrspace(3)* %sh1, align 8
  store i64 %s2, i64 addrspace(3)* %sh2, align 8
  call void @llvm.nvvm.barrier0()
  br label %loop_r

loop_r:
  %half = phi i64 [ %half0, %reduce ], [ %half_next, %join_r ]
  %more_r = icmp ugt i64 %half, 0
  br i1 %more_r, label %body_r, label %write

body_r:
  %active = icmp ult i64 %tid, %half
  br i1 %active, label %add_r, label %join_r

add_r:
  %o1 = add i64 %tid, %half
  %q1 = getelementptr [512 x i64], [512 x i64] addrspace(3)* @sh, i64 0, i64 %o1
  %o2 = add i64 %o1, 256
  %q2 = getelementptr [512 x i64], [512 x i64] addrspace(3)* @sh, i64 0, i64 %o2
  %a1 = load i64, i64 addrspace(3)* %sh1, align 8
  %b1 = load i64, i64 addrspace(3)* %q1, align 8
  %a2 = load i64, i64 addrspace(3)* %sh2, align 8
  %b2 = load i64, i64 addrspace(3)* %q2, align 8
  %c1 = add i64 %a1, %b1
  %c2 = add i64 %a2, %b2
  store i64 %c1, i64 addrspace(3)* %sh1, align 8
  store i64 %c2, i64 addrspace(3)* %sh2, align 8
  br label %join_r

join_r:
  call void @llvm.nvvm.barrier0()
  %half_next = lshr i64 %half, 1
  br label %loop_r

write:
  br i1 %first, label %store_sum, label %store_done

store_sum:
  %t1 = load i64, i64 addrspace(3)* %sh1, align 8
  %t2 = load i64, i64 addrspace(3)* %sh2, align 8
  %sidx = shl i64 %b, 4
  %saddr = add i64 %sums, %sidx
  %sp1 = inttoptr i64 %saddr to i64 addrspace(1)*
  store i64 %t1, i64 addrspace(1)* %sp1, align 8
  %saddr2 = add i64 %saddr, 8
  %sp2 = inttoptr i64 %saddr2 to i64 addrspace(1)*
  store i64 %t2, i64 addrspace(1)* %sp2, align 8
  br label %store_done

store_done:
  ; shared memory is reused by the next block
  call void @llvm.nvvm.barrier0()
  %b_next = add i64 %b, %ncta
  br label %loop_b

exit:
  ret void
}

define void @cd_gather_blocks(i64 %dst, i64 %src, i64 %list, i64 %count, i64 %block_bytes,
                              i64 %src_len) {
entry:
  %tid32 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %nt32 = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cta32 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ncta32 = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %tid = zext i32 %tid32 to i64
  %nt = zext i32 %nt32 to i64
  %cta = zext i32 %cta32 to i64
  %ncta = zext i32 %ncta32 to i64
  %wpb = lshr i64 %block_bytes, 3
  %total = mul i64 %count, %wpb
  %base = mul i64 %cta, %nt
  %t0 = add i64 %base, %tid
  %stride = mul i64 %ncta, %nt
  br label %loop

loop:
  %t = phi i64 [ %t0, %entry ], [ %t_next, %next ]
  %more = icmp ult i64 %t, %total
  br i1 %more, label %body, label %exit

body:
  %j = udiv i64 %t, %wpb
  %jw = mul i64 %j, %wpb
  %w = sub i64 %t, %jw
  %loff = shl i64 %j, 3
  %laddr = add i64 %list, %loff
  %lp = inttoptr i64 %laddr to i64 addrspace(1)*
  %k = load i64, i64 addrspace(1)* %lp, align 8
  %kb = mul i64 %k, %block_bytes
  %w8 = shl i64 %w, 3
  %o = add i64 %kb, %w8
  %jb = mul i64 %j, %block_bytes
  %doff = add i64 %jb, %w8
  %d = add i64 %dst, %doff
  %o8 = add i64 %o, 8
  %whole = icmp ule i64 %o8, %src_len
  br i1 %whole, label %word, label %tail

word:
  %sa = add i64 %src, %o
  %sp = inttoptr i64 %sa to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %sp, align 8
  %dp = inttoptr i64 %d to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %dp, align 8
  br label %next

tail:
  br label %tail_loop

tail_loop:
  %q = phi i64 [ %o, %tail ], [ %q_next, %tail_byte ]
  %in = icmp ult i64 %q, %src_len
  br i1 %in, label %tail_byte, label %next

tail_byte:
  %sqa = add i64 %src, %q
  %sqp = inttoptr i64 %sqa to i8 addrspace(1)*
  %byte = load i8, i8 addrspace(1)* %sqp, align 1
  %rel = sub i64 %q, %o
  %dqa = add i64 %d, %rel
  %dqp = inttoptr i64 %dqa to i8 addrspace(1)*
  store i8 %byte, i8 addrspace(1)* %dqp, align 1
  %q_next = add i64 %q, 1
  br label %tail_loop

next:
  %t_next = add i64 %t, %stride
  br label %loop

exit:
  ret void
}

define void @cd_bench_stencil(i64 %out, i64 %in, i64 %n) {
entry:
  %tid32 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %nt32 = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cta32 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ncta32 = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %tid = zext i32 %tid32 to i64
  %nt = zext i32 %nt32 to i64
  %cta = zext i32 %cta32 to i64
  %ncta = zext i32 %ncta32 to i64
  %base = mul i64 %cta, %nt
  %t0 = add i64 %base, %tid
  %stride = mul i64 %ncta, %nt
  %last = add i64 %n, -1
  br label %loop

loop:
  %t = phi i64 [ %t0, %entry ], [ %t_next, %body ]
  %more = icmp ult i64 %t, %n
  br i1 %more, label %body, label %exit

body:
  %at0 = icmp eq i64 %t, 0
  %tm1 = add i64 %t, -1
  %l = select i1 %at0, i64 0, i64 %tm1
  %atn = icmp uge i64 %t, %last
  %tp1 = add i64 %t, 1
  %r = select i1 %atn, i64 %t, i64 %tp1
  %lo = shl i64 %l, 2
  %mo = shl i64 %t, 2
  %ro = shl i64 %r, 2
  %la = add i64 %in, %lo
  %ma = add i64 %in, %mo
  %ra = add i64 %in, %ro
  %lp = inttoptr i64 %la to float addrspace(1)*
  %mp = inttoptr i64 %ma to float addrspace(1)*
  %rp = inttoptr i64 %ra to float addrspace(1)*
  %lv = load float, float addrspace(1)* %lp, align 4
  %mv = load float, float addrspace(1)* %mp, align 4
  %rv = load float, float addrspace(1)* %rp, align 4
  %ls = fmul float %lv, 2.500000e-01
  %ms = fmul float %mv, 5.000000e-01
  %rs = fmul float %rv, 2.500000e-01
  %s0 = fadd float %ls, %ms
  %s = fadd float %s0, %rs
  %oa = add i64 %out, %mo
  %op = inttoptr i64 %oa to float addrspace(1)*
  store float %s, float addrspace(1)* %op, align 4
  %t_next = add i64 %t, %stride
  br label %loop

exit:
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3}
!0 = !{void (i64, i64, i64, i64, i64)* @cd_block_sums, !"kernel", i32 1}
!1 = !{void (i64, i64, i64, i64, i64, i64)* @cd_gather_blocks, !"kernel", i32 1}
!2 = !{void (i64, i64, i64)* @cd_bench_stencil, !"kernel", i32 1}
!3 = !{void (i64, i64, i64, i64, i64)* @cd_block_sums, !"maxntidx", i32 256}
