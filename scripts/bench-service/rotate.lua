-- wrk script: rotates over the request paths listed (one per line) in the file named by PATHS_FILE,
-- each thread starting at a different offset so the 60 sources are spread evenly.
local paths = {}
local counter = 0

function init(args)
  local file = io.open(os.getenv("PATHS_FILE"), "r")
  for line in file:lines() do
    if #line > 0 then paths[#paths + 1] = line end
  end
  file:close()
  counter = math.random(#paths)
end

function request()
  counter = counter % #paths + 1
  return wrk.format("GET", paths[counter])
end
