module ordersaga/scripts/sqsemulator

go 1.26.0

require github.com/sivchari/kumo v0.33.1

require (
	github.com/aws/aws-sdk-go-v2 v1.43.4 // indirect
	github.com/aws/smithy-go v1.27.6 // indirect
	github.com/cedar-policy/cedar-go v1.8.0 // indirect
	github.com/fxamacker/cbor/v2 v2.9.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/crypto v0.47.0 // indirect
	golang.org/x/exp v0.0.0-20220921023135-46d9e7742f1e // indirect
	golang.org/x/sys v0.40.0 // indirect
)
