// data/decode/gpu/nvjpeg_api.h — the subset of nvJPEG's C API that stoker's GPU decode path
// calls, declared here so that building stoker needs no nvjpeg.h or CUDA toolkit (nvJPEG is
// loaded with dlopen; see nvjpeg_library.h).
//
// Written from NVIDIA's nvJPEG documentation and nvjpeg.h (CUDA 12.x; the decode API is the
// same in 11.x and 13.x): names, enum values and struct layouts must match it exactly, since
// nothing checks them at build time. The names stay nvJPEG's own, at global scope as nvjpeg.h
// has them, so that this file reads against the documentation. Include it only in files that
// include no CUDA header (which would declare cudaStream_t and libraryPropertyType too).
#pragma once

#include <cstddef>

// --- CUDA types nvJPEG's signatures use ------------------------------------------------------

typedef struct CUstream_st* cudaStream_t;  // cuda_runtime_api.h
typedef enum libraryPropertyType_t {       // library_types.h
  MAJOR_VERSION = 0,
  MINOR_VERSION = 1,
  PATCH_LEVEL = 2
} libraryPropertyType;

// --- Constants and enums -----------------------------------------------------------------------

inline constexpr int NVJPEG_MAX_COMPONENT = 4;
inline constexpr unsigned int NVJPEG_FLAGS_DEFAULT = 0;

typedef enum {
  NVJPEG_STATUS_SUCCESS = 0,
  NVJPEG_STATUS_NOT_INITIALIZED = 1,
  NVJPEG_STATUS_INVALID_PARAMETER = 2,
  NVJPEG_STATUS_BAD_JPEG = 3,
  NVJPEG_STATUS_JPEG_NOT_SUPPORTED = 4,
  NVJPEG_STATUS_ALLOCATOR_FAILURE = 5,
  NVJPEG_STATUS_EXECUTION_FAILED = 6,
  NVJPEG_STATUS_ARCH_MISMATCH = 7,
  NVJPEG_STATUS_INTERNAL_ERROR = 8,
  NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED = 9,
  NVJPEG_STATUS_INCOMPLETE_BITSTREAM = 10
} nvjpegStatus_t;

typedef enum {
  NVJPEG_CSS_444 = 0,
  NVJPEG_CSS_422 = 1,
  NVJPEG_CSS_420 = 2,
  NVJPEG_CSS_440 = 3,
  NVJPEG_CSS_411 = 4,
  NVJPEG_CSS_410 = 5,
  NVJPEG_CSS_GRAY = 6,
  NVJPEG_CSS_410V = 7,
  NVJPEG_CSS_UNKNOWN = -1
} nvjpegChromaSubsampling_t;

typedef enum {
  NVJPEG_OUTPUT_UNCHANGED = 0,
  NVJPEG_OUTPUT_YUV = 1,
  NVJPEG_OUTPUT_Y = 2,     // luma only (gray)
  NVJPEG_OUTPUT_RGB = 3,   // planar
  NVJPEG_OUTPUT_BGR = 4,   // planar
  NVJPEG_OUTPUT_RGBI = 5,  // interleaved, into channel[0]
  NVJPEG_OUTPUT_BGRI = 6,
  NVJPEG_OUTPUT_UNCHANGEDI_U16 = 7
} nvjpegOutputFormat_t;

typedef enum {
  NVJPEG_BACKEND_DEFAULT = 0,
  NVJPEG_BACKEND_HYBRID = 1,      // Huffman on the CPU
  NVJPEG_BACKEND_GPU_HYBRID = 2,  // Huffman on the GPU for batches over about 50
  NVJPEG_BACKEND_HARDWARE = 3,    // the engine: baseline, one scan, no 4:1:0 / 4:1:1
  NVJPEG_BACKEND_GPU_HYBRID_DEVICE = 4,
  NVJPEG_BACKEND_HARDWARE_DEVICE = 5,
  NVJPEG_BACKEND_LOSSLESS_JPEG = 6
} nvjpegBackend_t;

typedef enum {  // hardware backend only
  NVJPEG_SCALE_NONE = 0,
  NVJPEG_SCALE_1_BY_2 = 1,
  NVJPEG_SCALE_1_BY_4 = 2,
  NVJPEG_SCALE_1_BY_8 = 3
} nvjpegScaleFactor_t;

// --- Structs -------------------------------------------------------------------------------------

typedef struct {
  unsigned char* channel[NVJPEG_MAX_COMPONENT];
  size_t pitch[NVJPEG_MAX_COMPONENT];
} nvjpegImage_t;

typedef int (*tDevMalloc)(void**, size_t);
typedef int (*tDevFree)(void*);
typedef int (*tPinnedMalloc)(void**, size_t, unsigned int flags);
typedef int (*tPinnedFree)(void*);
typedef struct {
  tDevMalloc dev_malloc;
  tDevFree dev_free;
} nvjpegDevAllocator_t;
typedef struct {
  tPinnedMalloc pinned_malloc;
  tPinnedFree pinned_free;
} nvjpegPinnedAllocator_t;

// --- Handles -------------------------------------------------------------------------------------

typedef struct nvjpegHandle* nvjpegHandle_t;
typedef struct nvjpegJpegState* nvjpegJpegState_t;
typedef struct nvjpegJpegStream* nvjpegJpegStream_t;
typedef struct nvjpegDecodeParams* nvjpegDecodeParams_t;
typedef struct nvjpegJpegDecoder* nvjpegJpegDecoder_t;
typedef struct nvjpegBufferDevice* nvjpegBufferDevice_t;  // 2.2.3, "Decode Device Buffer Handle"

// --- Functions, as types for dlsym ---------------------------------------------------------------

namespace nvjpeg_fn {

using GetProperty = nvjpegStatus_t(libraryPropertyType type, int* value);
using CreateEx = nvjpegStatus_t(nvjpegBackend_t backend, nvjpegDevAllocator_t* dev_allocator,
                                nvjpegPinnedAllocator_t* pinned_allocator, unsigned int flags, nvjpegHandle_t* handle);
using Destroy = nvjpegStatus_t(nvjpegHandle_t handle);
using SetDeviceMemoryPadding = nvjpegStatus_t(size_t padding, nvjpegHandle_t handle);
using JpegStateCreate = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegJpegState_t* jpeg_handle);
using JpegStateDestroy = nvjpegStatus_t(nvjpegJpegState_t jpeg_handle);
using GetImageInfo = nvjpegStatus_t(nvjpegHandle_t handle, const unsigned char* data, size_t length, int* components,
                                    nvjpegChromaSubsampling_t* subsampling, int* widths, int* heights);
using DecodeBatchedInitialize = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegJpegState_t jpeg_handle, int batch_size,
                                               int max_cpu_threads, nvjpegOutputFormat_t output_format);
using DecodeBatched = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegJpegState_t jpeg_handle,
                                     const unsigned char* const* data, const size_t* lengths,
                                     nvjpegImage_t* destinations, cudaStream_t stream);
using DecodeBatchedEx = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegJpegState_t jpeg_handle,
                                       const unsigned char* const* data, const size_t* lengths,
                                       nvjpegImage_t* destinations, nvjpegDecodeParams_t* decode_params,
                                       cudaStream_t stream);
using DecodeBatchedPreAllocate = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegJpegState_t jpeg_handle, int batch_size,
                                                int width, int height, nvjpegChromaSubsampling_t chroma_subsampling,
                                                nvjpegOutputFormat_t output_format);
using DecodeBatchedSupportedEx = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegJpegStream_t jpeg_stream,
                                                nvjpegDecodeParams_t decode_params, int* is_supported);
using JpegStreamCreate = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegJpegStream_t* jpeg_stream);
using JpegStreamDestroy = nvjpegStatus_t(nvjpegJpegStream_t jpeg_stream);
using JpegStreamParse = nvjpegStatus_t(nvjpegHandle_t handle, const unsigned char* data, size_t length,
                                       int save_metadata, int save_stream, nvjpegJpegStream_t jpeg_stream);
// 2.3.2.2.4: the frame's size in pixels, from a parsed stream.
using JpegStreamGetFrameDimensions = nvjpegStatus_t(nvjpegJpegStream_t jpeg_stream, unsigned int* width,
                                                    unsigned int* height);
using DecodeParamsCreate = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegDecodeParams_t* decode_params);
using DecodeParamsDestroy = nvjpegStatus_t(nvjpegDecodeParams_t decode_params);
using DecodeParamsSetOutputFormat = nvjpegStatus_t(nvjpegDecodeParams_t decode_params,
                                                   nvjpegOutputFormat_t output_format);
// (0, 0, -1, -1) decodes the whole image.
using DecodeParamsSetROI = nvjpegStatus_t(nvjpegDecodeParams_t decode_params, int offset_x, int offset_y, int roi_width,
                                          int roi_height);
using DecodeParamsSetScaleFactor = nvjpegStatus_t(nvjpegDecodeParams_t decode_params, nvjpegScaleFactor_t scale_factor);
using DecoderCreate = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegBackend_t implementation,
                                     nvjpegJpegDecoder_t* decoder_handle);
using DecoderDestroy = nvjpegStatus_t(nvjpegJpegDecoder_t decoder_handle);
using DecoderStateCreate = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder_handle,
                                          nvjpegJpegState_t* decoder_state);
// 2.3.1.27, 2.3.1.29, 2.3.1.30: the device buffer nvjpegDecodeJpeg requires attached to its
// state (a null allocator: nvJPEG's default, cudaMalloc).
using BufferDeviceCreate = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegDevAllocator_t* device_allocator,
                                          nvjpegBufferDevice_t* buffer);
using BufferDeviceDestroy = nvjpegStatus_t(nvjpegBufferDevice_t buffer);
using StateAttachDeviceBuffer = nvjpegStatus_t(nvjpegJpegState_t decoder_state, nvjpegBufferDevice_t device_buffer);
using DecodeJpeg = nvjpegStatus_t(nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder, nvjpegJpegState_t decoder_state,
                                  nvjpegJpegStream_t jpeg_bitstream, nvjpegImage_t* destination,
                                  nvjpegDecodeParams_t decode_params, cudaStream_t stream);
using GetHardwareDecoderInfo = nvjpegStatus_t(nvjpegHandle_t handle, unsigned int* num_engines,
                                              unsigned int* num_cores_per_engine);

}  // namespace nvjpeg_fn
